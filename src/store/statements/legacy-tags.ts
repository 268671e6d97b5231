// Legacy tags: the statements both engines run as written (the count is each engine's own: PostgreSQL's is a bigint).
import { statements } from './shared.js';

export const legacyTagStatements = statements('legacyTags', {
  get: 'SELECT * FROM legacy_tags WHERE workspace_id = $1 AND id = $2',
  insert:
    'INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, id) DO NOTHING',
  list: 'SELECT * FROM legacy_tags WHERE workspace_id = $1 ORDER BY name',
});
