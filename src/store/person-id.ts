// What both engines share to make a legacy lead's person id inside a statement, as src/lead/external-id.ts
// makes it in JavaScript (repos/leads.ts, `unlinkedLegacyOf`).

/**
 * The characters String.prototype.trim removes (WhiteSpace and LineTerminator): SQL's trim, given them,
 * trims a member as JavaScript does, so the id made in the statement is the id made in the code.
 */
export const TRIMMED_CHARACTERS =
  '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/**
 * An array's `length` is what JavaScript reads for a last member named so (`{extra_data.tags.length}`),
 * where a JSON path finds nothing: the engines read the array's length there.
 */
export const ARRAY_LENGTH = 'length';
