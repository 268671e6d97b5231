// Pages of one integration's leads: the statements both engines run as written (the count is each
// engine's own: PostgreSQL keeps it in stripes).
import { statements } from './shared.js';

const live = 'integration_id = $1 AND deleted_at IS NULL';

export const leadPageStatements = statements('leadPages', {
  after: `SELECT * FROM leads WHERE ${live} AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4`,
  before: `SELECT * FROM leads WHERE ${live} AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
  // The skipped leads are stepped over in the index only (the inner SELECT reads no table row); the
  // offset itself is bounded by the caller.
  offset: `SELECT * FROM leads WHERE id IN (SELECT id FROM leads WHERE ${live} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
   ORDER BY created_at DESC, id DESC`,
});
