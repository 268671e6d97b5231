// The tables behind the inspector's records, shared by every engine's inspector: which table, which
// members are named apart from their column, which are JSON.

/** A record's members -> SQL expressions over its table, where a member is not its column's snake_case name. */
export interface Table {
  name: string;
  renamed?: Record<string, string>;
  /** Members stored as JSON (text in SQLite, jsonb in PostgreSQL): compared as the JSON of the value given. */
  json?: readonly string[];
}

export const TABLES = {
  leads: { name: 'leads', json: ['extraData'] },
  contacts: { name: 'contacts' },
  submissions: { name: 'submissions', json: ['body', 'outcome'] },
  answers: {
    name: 'answers',
    renamed: {
      key: 'answer_key',
      raw: 'raw_value',
      submissionEndpoint: '(SELECT s.endpoint FROM submissions s WHERE s.id = answers.submission_id)',
    },
    json: ['raw'],
  },
  fieldValues: {
    name: 'custom_field_values',
    renamed: {
      text: 'text_value',
      decimal: 'decimal_value',
      bool: 'boolean_value',
      date: 'date_value',
      datetime: 'datetime_value',
      optionIds: 'selected_options',
    },
    json: ['optionIds'],
  },
  leadPayments: { name: 'lead_payments' },
} satisfies Record<string, Table>;

/** Every inspected record set, each answered by an engine's `records(table)`. */
export const recordsOfEveryTable = <R>(records: (table: Table) => R): { [K in keyof typeof TABLES]: R } =>
  Object.fromEntries(Object.entries(TABLES).map(([name, table]) => [name, records(table)])) as {
    [K in keyof typeof TABLES]: R;
  };

export const snakeCase = (member: string) => member.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
