// The inspector's answers on PostgreSQL, read through the store's pool (tests only).
import pg from 'pg';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Condition, Inspector, Records, Where } from './inspect.js';
import { recordsOfEveryTable, snakeCase, type Table } from './inspected-tables.js';

/** int8 and numeric arrive as text; the tests compare numbers, as SQLite gives them (exact ones stay text). */
const asNumber = (value: unknown) =>
  typeof value === 'string' && /^-?\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
const NUMERIC_TYPES = new Set([20, 1700]);

export function postgresInspector(store: PostgresStore): Inspector {
  const pool: pg.Pool = store.pool;
  const records = (table: Table): Records => {
    const isJson = (member: string) => table.json?.includes(member) ?? false;
    // A JSON member is jsonb, or text holding JSON where its order must be kept (submissions.outcome): read as jsonb either way.
    const column = (member: string) => {
      const name = table.renamed?.[member] ?? snakeCase(member);
      return isJson(member) ? `(${name})::jsonb` : name;
    };
    const filter = (where: Where = {}) => {
      const params: unknown[] = [];
      const param = (member: string, value: unknown) =>
        `$${params.push(isJson(member) && value !== null ? JSON.stringify(value) : value)}${isJson(member) ? '::jsonb' : ''}`;
      const terms = Object.entries(where).map(([member, c]: [string, Condition]) => {
        const col = column(member);
        if (c === null) return `${col} IS NULL`;
        if (typeof c === 'object' && 'like' in c) return `${col}::text LIKE $${params.push(c.like)}`;
        if (typeof c === 'object' && 'in' in c)
          return c.in.length === 0 ? 'false' : `${col} IN (${c.in.map((v) => param(member, v)).join(', ')})`;
        return `${col} = ${param(member, c)}`;
      });
      return { sql: terms.length === 0 ? 'true' : terms.join(' AND '), params };
    };
    return {
      async count(where) {
        const f = filter(where);
        return Number(
          (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table.name} WHERE ${f.sql}`, f.params)).rows[0]!
            .n,
        );
      },
      async list(where, members) {
        const f = filter(where);
        const cols = members.map((m) => `${column(m)} AS "${m}"`).join(', ');
        const result = await pool.query(
          `SELECT ${cols} FROM ${table.name} WHERE ${f.sql} ORDER BY ${members.map((_, i) => i + 1).join(', ')}`,
          f.params,
        );
        const numeric = new Set(
          result.fields.filter((field) => NUMERIC_TYPES.has(field.dataTypeID)).map((field) => field.name),
        );
        return result.rows.map((row: Record<string, unknown>) =>
          Object.fromEntries(Object.entries(row).map(([m, v]) => [m, numeric.has(m) ? asNumber(v) : v])),
        );
      },
    };
  };
  /**
   * Changes a default of the database and ends every connection of the store, from a session of its
   * own (a pooled one would go back to the pool with the old default): the pool opens new ones.
   */
  const setDefault = async (setting: string) => {
    const admin = new pg.Client({ connectionString: pool.options.connectionString });
    await admin.connect();
    try {
      // This session starts read-only too once writes are refused.
      await admin.query('SET default_transaction_read_only = off');
      await admin.query(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET ${setting}', current_database()); END $$`);
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'lead-gateway'",
      );
    } finally {
      await admin.end();
    }
    // The pool drops a connection when it reads its socket's end: wait until it has dropped them all
    // (nothing of the store runs meanwhile in these tests), for two seconds at most.
    for (let waited = 0; pool.totalCount > 0 && waited < 2_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return {
    ...recordsOfEveryTable(records),
    async dump(table) {
      return (await pool.query({ text: `SELECT * FROM ${table} ORDER BY 1, 2`, rowMode: 'array' })).rows as unknown[][];
    },
    async refuseWrites(refuse) {
      await setDefault(`default_transaction_read_only = ${refuse ? 'on' : 'off'}`);
    },
    async dropTables(...tables) {
      for (const t of tables) await pool.query(`DROP TABLE ${t} CASCADE`);
    },
    async whileUnreadable(table, work) {
      const locker = new pg.Client({ connectionString: pool.options.connectionString });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        return await work();
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        await locker.end();
      }
    },
    async removeContact(id) {
      // No foreign key names contacts since migration 16 (docs/architecture.md, "References kept by the units").
      await pool.query('DELETE FROM contacts WHERE id = $1', [id]);
    },
  };
}
