// The statements both engines share (src/store/statements/), prepared on SQLite.
import type Database from 'better-sqlite3';
import type { Db } from './connection.js';
import { parameterCount, type SharedSql } from '../statements/shared.js';

/** A shared statement on SQLite: its values given in the order of their numbers, as on PostgreSQL. */
export interface SharedStatement<R> {
  run(...values: unknown[]): Database.RunResult;
  get(...values: unknown[]): R | undefined;
  all(...values: unknown[]): R[];
}

/**
 * Prepares `shared` once, when the repository is built. Its `$n` become `?n`, SQLite's numbered
 * parameters: SQLite would read `$1` as a name too, but a `$` name runs on through a following `::`
 * or `(...)`. better-sqlite3 binds a list only to bare `?`; a numbered `?n` it binds by name, from an
 * object whose key is `n`, so each call hands the values over that way, and a number written twice
 * takes one value.
 */
export function prepareShared<R = unknown>(db: Db, shared: SharedSql): SharedStatement<R> {
  const prepared = db.prepare<Record<number, unknown>, R>(shared.text.replace(/\$(\d+)/g, '?$1'));
  const count = parameterCount(shared.text);
  const bind = (values: unknown[]): Record<number, unknown> => {
    // PostgreSQL refuses a call with the wrong number of values: so does this side.
    if (values.length !== count) throw new TypeError(`${shared.name} takes ${count} values, not ${values.length}`);
    const named: Record<number, unknown> = {};
    for (let i = 0; i < count; i++) named[i + 1] = values[i];
    return named;
  };
  return {
    run: (...values) => prepared.run(bind(values)),
    get: (...values) => prepared.get(bind(values)),
    all: (...values) => prepared.all(bind(values)),
  };
}
