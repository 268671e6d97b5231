// The PostgreSQL database `lead-gateway copy` writes: migrated as a gateway migrates it, then given the
// rows of a SQLite file a batch at a time, each value turned into its column's type here.
import { StoreOpenError } from '../store.js';
import { migrate } from './migrations.js';
import { createPool, safeLocation } from './pool.js';

export interface CopyTarget {
  /** The URL without its password. */
  location: string;
  /** The columns of `table` in the database, by name, with their type (information_schema's data_type). */
  columns(table: string): Promise<Map<string, string>>;
  /**
   * Inserts the rows (values in the order of `columns`) in one statement; a row whose primary key or
   * other unique key is there already is left as it is. Answers how many rows were new.
   */
  insert(table: string, columns: string[], rows: unknown[][]): Promise<number>;
  count(table: string): Promise<number>;
  /**
   * Counts the kept unmapped and invalid answers again from the answers now there: into a database
   * gateways wrote to, both sets of answers are in, while each key's count kept one side's figure.
   * A key whose count is right already keeps its row (and its bytes, measured as the gateway does).
   */
  recountKept(): Promise<void>;
  close(): Promise<void>;
}

/** A batch may take this long: far above what 1,000 rows need, well below a hung server. */
const COPY_STATEMENT_TIMEOUT_MS = 60_000;

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * A SQLite value as the PostgreSQL column wants it. SQLite stores flags as 0 and 1 and JSON as text
 * (jsonb parses the text as it is); integers come as bigint, sent as their digits, which integer,
 * bigint and numeric columns all read exactly.
 */
function converted(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'boolean') return value === 1n || value === 1 || value === true;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

export async function openCopyTarget(url: string): Promise<CopyTarget> {
  const location = safeLocation(url);
  const pool = createPool({ url, poolSize: 1, statementTimeoutMs: COPY_STATEMENT_TIMEOUT_MS });
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreOpenError(location, (error as Error).message, { cause: error });
  }
  const types = new Map<string, Map<string, string>>();
  const columns = async (table: string) => {
    let found = types.get(table);
    if (!found) {
      const { rows } = await pool.query<{ column_name: string; data_type: string }>(
        'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
        [table],
      );
      found = new Map(rows.map((r) => [r.column_name, r.data_type]));
      types.set(table, found);
    }
    return found;
  };
  return {
    location,
    columns,
    async insert(table, names, rows) {
      if (rows.length === 0) return 0;
      const typeOf = await columns(table);
      const values: unknown[] = [];
      const tuples = rows.map((row) => {
        const places = names.map((name, i) => {
          values.push(converted(row[i], typeOf.get(name) ?? 'text'));
          return `$${values.length}`;
        });
        return `(${places.join(', ')})`;
      });
      // No conflict target: any unique key (a ledger's event_id as well as the id) keeps the row there.
      const text = `INSERT INTO ${quoted(table)} (${names.map(quoted).join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING`;
      const result = await pool.query(text, values);
      return result.rowCount ?? 0;
    },
    async count(table) {
      const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoted(table)}`);
      return Number(rows[0]!.n);
    },
    async recountKept() {
      await pool.query(
        `INSERT INTO answers_kept (integration_id, answer_key, answers, bytes)
           SELECT integration_id, answer_key, count(*), sum(octet_length(answer_key) + octet_length(raw_value::text))
           FROM answers WHERE outcome IN ('unmapped', 'invalid') GROUP BY integration_id, answer_key
         ON CONFLICT (integration_id, answer_key) DO UPDATE
           SET answers = excluded.answers, bytes = GREATEST(answers_kept.bytes, excluded.bytes)
           WHERE answers_kept.answers <> excluded.answers`,
      );
    },
    close: () => pool.end(),
  };
}
