// What a PostgreSQL repository runs its statements on: the pool (one statement, autocommitted) or the
// client of a unit of work. Every statement is named, so each connection parses and plans it once.
import type pg from 'pg';

export interface Sql {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * A unit's connection with its statements sent one after another. A unit may start several repo
 * calls at once (Promise.all); one connection runs one statement at a time anyway, and node-postgres
 * deprecates being handed a second before the first has answered.
 */
export function inOrder(client: Sql): Sql {
  let last: Promise<unknown> = Promise.resolve();
  return {
    query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
      const next = last.then(
        () => client.query<R>(config),
        () => client.query<R>(config),
      );
      last = next.catch(() => {});
      return next;
    },
  };
}

/** A named statement: `run(sql, ...values)` executes it prepared on whichever connection runs it. */
export function statement<R extends pg.QueryResultRow = pg.QueryResultRow>(name: string, text: string) {
  return {
    run: (sql: Sql, ...values: unknown[]): Promise<pg.QueryResult<R>> => sql.query<R>({ name, text, values }),
    rows: async (sql: Sql, ...values: unknown[]): Promise<R[]> => (await sql.query<R>({ name, text, values })).rows,
    one: async (sql: Sql, ...values: unknown[]): Promise<R | null> => (await sql.query<R>({ name, text, values })).rows[0] ?? null,
  };
}
