// API keys in PostgreSQL: the shared statements (src/store/statements/keys.ts) and the use counter's upsert.
import type { KeyRepo } from '../../repos/keys.js';
import { rowToKey, rowToListedKey, type KeyRow } from '../../sql-rows.js';
import { keyStatements as shared } from '../../statements/keys.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

const byHash = sharedStatement<KeyRow>(shared.byHash);
const insert = sharedStatement(shared.insert);
const list = sharedStatement<KeyRow & { last_used_at: string | null }>(shared.list);
// Every use in one statement; rows taken in key order, so two replicas flushing the same keys at once
// lock them in the same order and never deadlock.
const used = statement(
  'keys.markUsed',
  `INSERT INTO key_usage (key_id, last_used_at)
   SELECT key_id, last_used_at FROM unnest($1::text[], $2::text[]) AS u (key_id, last_used_at) ORDER BY key_id
   ON CONFLICT (key_id) DO UPDATE SET last_used_at = GREATEST(key_usage.last_used_at, excluded.last_used_at)`,
);
const revokeAll = sharedStatement(shared.revokeAll);
const revoke = sharedStatement(shared.revoke);

export function pgKeyRepo(sql: Sql): KeyRepo {
  return {
    revoke: async (id, at) => (await revoke.run(sql, at, id)).rowCount === 1,
    revokeAll: async (integrationId, at) => (await revokeAll.run(sql, at, integrationId)).rowCount ?? 0,
    findByHash: async (hash) => {
      const row = await byHash.one(sql, hash);
      return row ? rowToKey(row) : null;
    },
    insert: async (k) =>
      (await insert.run(sql, k.id, k.integrationId, k.kind, k.prefix, k.hash, k.createdAt, k.createdBy, k.revokedAt))
        .rowCount === 1,
    listForIntegration: async (integrationId) => (await list.rows(sql, integrationId)).map(rowToListedKey),
    markUsed: async (uses) => {
      if (uses.length === 0) return;
      const sorted = [...uses].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
      await used.run(
        sql,
        sorted.map((u) => u.keyId),
        sorted.map((u) => u.at),
      );
    },
  };
}
