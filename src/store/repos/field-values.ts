// Custom field values of leads, each with who wrote it (provenance).

export type WriterKind = 'employee' | 'import' | 'automation' | 'integration';

/** Who wrote a value: an employee (username), an import or automation (its name), an integration (its id). */
export interface Writer {
  kind: WriterKind;
  ref: string | null;
}

/** A typed value; exactly the members of its field type are set. */
export interface FieldData {
  text: string | null;
  decimal: string | null;
  bool: boolean | null;
  date: string | null;
  datetime: string | null;
  optionId: string | null;
  optionIds: string[];
}

export interface FieldValue extends FieldData {
  id: string;
  leadId: string;
  fieldId: string;
  writtenBy: Writer;
  updatedAt: string;
}

export interface FieldValueRepo {
  get(leadId: string, fieldId: string): Promise<FieldValue | null>;
  /** The lead's values of these fields (those it has), in one read. */
  getMany(leadId: string, fieldIds: readonly string[]): Promise<FieldValue[]>;
  listForLead(leadId: string): Promise<FieldValue[]>;
  /** Inserts or replaces the lead's value of that field. */
  put(value: FieldValue): Promise<void>;
}
