// The statements both engines run as written: one text, parameters numbered as PostgreSQL numbers them.

/**
 * A statement both engines share: its name (the PostgreSQL engine prepares it under that name on each
 * connection) and its text, with its parameters written `$1` to `$n`, each number meaning one value
 * however often it appears. The text holds no other `$`: the SQLite engine rewrites every `$n` to its
 * own numbered form (`src/store/sqlite/shared.ts`).
 */
export interface SharedSql {
  readonly name: string;
  readonly text: string;
}

/** The statements of one repository, each named `group.key` (the names the PostgreSQL engine has always used). */
export function statements<K extends string>(
  group: string,
  texts: Readonly<Record<K, string>>,
): Readonly<Record<K, SharedSql>> {
  const named = {} as Record<K, SharedSql>;
  for (const key of Object.keys(texts) as K[]) named[key] = { name: `${group}.${key}`, text: texts[key] };
  return named;
}

/** The highest parameter number of a shared text: how many values a call binds. */
export function parameterCount(text: string): number {
  let count = 0;
  for (const [, n] of text.matchAll(/\$(\d+)/g)) count = Math.max(count, Number(n));
  return count;
}
