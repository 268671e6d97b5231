// The inspector's answers on SQLite, read through the store's writer connection (tests only).
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Condition, Inspector, Records, Where } from './inspect.js';
import { recordsOfEveryTable, snakeCase, type Table } from './inspected-tables.js';

export function sqliteInspector(store: SqliteStore): Inspector {
  const db = store.db;
  const records = (table: Table): Records => {
    const column = (member: string) => table.renamed?.[member] ?? snakeCase(member);
    const encode = (member: string, value: unknown) =>
      table.json?.includes(member) && value !== null
        ? JSON.stringify(value)
        : typeof value === 'boolean'
          ? Number(value)
          : value;
    const filter = (where: Where = {}) => {
      const params: unknown[] = [];
      const terms = Object.entries(where).map(([member, c]: [string, Condition]) => {
        const col = column(member);
        if (c === null) return `${col} IS NULL`;
        if (typeof c === 'object' && 'like' in c) return (params.push(c.like), `${col} LIKE ?`);
        if (typeof c === 'object' && 'in' in c)
          return (
            params.push(...c.in.map((v) => encode(member, v))),
            `${col} IN (${c.in.map(() => '?').join(', ') || 'NULL'})`
          );
        return (params.push(encode(member, c)), `${col} = ?`);
      });
      return { sql: terms.length === 0 ? '1 = 1' : terms.join(' AND '), params };
    };
    return {
      async count(where) {
        const f = filter(where);
        return (db.prepare(`SELECT count(*) AS n FROM ${table.name} WHERE ${f.sql}`).get(...f.params) as { n: number })
          .n;
      },
      async list(where, members) {
        const f = filter(where);
        const cols = members.map((m) => `${column(m)} AS "${m}"`).join(', ');
        const rows = db
          .prepare(
            `SELECT ${cols} FROM ${table.name} WHERE ${f.sql} ORDER BY ${members.map((_, i) => i + 1).join(', ')}`,
          )
          .all(...f.params) as Record<string, unknown>[];
        return rows.map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([m, v]) => [
              m,
              table.json?.includes(m) && typeof v === 'string' ? JSON.parse(v) : v,
            ]),
          ),
        );
      },
    };
  };
  return {
    ...recordsOfEveryTable(records),
    async dump(table) {
      return db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).raw().all() as unknown[][];
    },
    async refuseWrites(refuse) {
      db.pragma(`query_only = ${refuse ? 'ON' : 'OFF'}`);
    },
    async dropTables(...tables) {
      for (const t of tables) db.exec(`DROP TABLE ${t}`);
    },
    async whileUnreadable(table, work) {
      db.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`);
      try {
        return await work();
      } finally {
        db.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`);
      }
    },
    async removeContact(id) {
      // Outside any unit (the store's units are synchronous): the pragma takes effect at once.
      db.pragma('foreign_keys = OFF');
      try {
        db.prepare('DELETE FROM contacts WHERE id = ?').run(id);
      } finally {
        db.pragma('foreign_keys = ON');
      }
    },
  };
}
