// API keys in SQLite: the shared statements (src/store/statements/keys.ts) and the use counter's upsert.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { KeyRepo } from '../../repos/keys.js';
import { keyStatements as shared } from '../../statements/keys.js';
import { rowToKey, rowToListedKey, type KeyRow } from '../../sql-rows.js';

export function sqliteKeyRepo(db: Db): KeyRepo {
  const byHash = prepareShared<KeyRow>(db, shared.byHash);
  const insert = prepareShared(db, shared.insert);
  const list = prepareShared<KeyRow & { last_used_at: string | null }>(db, shared.list);
  const used = db.prepare(
    'INSERT INTO key_usage (key_id, last_used_at) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)',
  );
  const revokeAll = prepareShared(db, shared.revokeAll);
  const revoke = prepareShared(db, shared.revoke);
  return {
    revoke: async (id, at) => revoke.run(at, id).changes === 1,
    revokeAll: async (integrationId, at) => revokeAll.run(at, integrationId).changes,
    findByHash: async (hash) => {
      const row = byHash.get(hash);
      return row ? rowToKey(row) : null;
    },
    insert: async (k) =>
      insert.run(k.id, k.integrationId, k.kind, k.prefix, k.hash, k.createdAt, k.createdBy, k.revokedAt).changes === 1,
    listForIntegration: async (integrationId) => list.all(integrationId).map(rowToListedKey),
    markUsed: async (uses) => {
      for (const u of uses) used.run(u.keyId, u.at);
    },
  };
}
