// A submitted person and its latest lead, found and locked in one round trip: three statements sent at
// once, each passing what the next one needs through a setting of the transaction (set_config), so
// that none waits for the answer of the one before.
//
// Why three statements and not one: at READ COMMITTED a statement reads as of its start. A lock it
// waits for is granted later, and what the lock's holder committed meanwhile (a lead it created, a
// value it wrote) stays invisible to the rest of that statement. So each read that must come after a
// lock is a statement of its own, started once the lock before it is held: the person's row lock,
// then its latest lead's (which must see a lead the person's last writer made), then the field values
// (which must see a value the lead's last writer wrote). The person keys' advisory locks are the
// statement before all three (locks.ts). The order of the locks is the order of the statements.
import type { HoldRepo } from '../../repos/holds.js';
import type { MatchedKey } from '../../repos/contacts.js';
import { rowToContact, rowToFieldValue, rowToLead, type ContactRow, type FieldValueRow, type LeadRow } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';
import { CONTACT_COLUMNS, MATCH_SQL, checkBound, norm, type BoundRow } from './contacts.js';

/** Transaction-local settings (`set_config(..., true)`): gone at COMMIT or ROLLBACK, read back as '' after it. */
const HELD_CONTACT = 'lead_gateway.held_contact';
const HELD_LEAD = 'lead_gateway.held_lead';
/** A setting as this transaction left it: null when it was not set (or set to none). */
const setting = (name: string) => `nullif(current_setting('${name}', true), '')`;

const lockedColumns = CONTACT_COLUMNS.map((c) => `l.${c} AS locked_${c}`).join(', ');
const foundColumns = CONTACT_COLUMNS.map((c) => `f.${c}`).join(', ');

// The match (MATCH_SQL, under the person keys' locks), then the person's row locked; the setting is
// made whatever is found, so a later statement never reads another transaction's leftover.
const matchLocked = statement<BoundRow & { matched_by: MatchedKey | null } & { [K in `locked_${(typeof CONTACT_COLUMNS)[number]}`]: string | null }>(
  'holds.matchLocked',
  `WITH f AS MATERIALIZED (${MATCH_SQL}),
     l AS MATERIALIZED (SELECT c.* FROM contacts c WHERE c.id = (SELECT id FROM f) FOR NO KEY UPDATE)
   SELECT f.matched_by, f.bound_contact_id, ${foundColumns}, ${lockedColumns}
   FROM (SELECT set_config('${HELD_CONTACT}', coalesce((SELECT id FROM f), ''), true) AS held) AS noted
   LEFT JOIN f ON true LEFT JOIN l ON true`,
);
// A binding whose person is not there comes with its id alone (contacts.ts, `checkBound`).
const bound = statement<BoundRow>(
  'holds.bound',
  `WITH f AS MATERIALIZED (
     SELECT c.*, b.contact_id AS bound_contact_id FROM contact_bindings b LEFT JOIN contacts c ON c.id = b.contact_id
     WHERE b.integration_id = $1 AND b.external_contact_id = $2)
   SELECT f.bound_contact_id, ${foundColumns}
   FROM (SELECT set_config('${HELD_CONTACT}', coalesce((SELECT id FROM f), ''), true) AS held) AS noted
   LEFT JOIN f ON true`,
);
// leads.lockLatest on the person the statement before held: a row a waited-for unit changed is answered
// in its committed version, deleted or not (the caller looks again).
const latestLocked = statement<LeadRow & { held_lead: string }>(
  'holds.latestLocked',
  `WITH latest AS MATERIALIZED (
     SELECT * FROM leads WHERE id = (
       SELECT id FROM leads WHERE contact_id = ${setting(HELD_CONTACT)} AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1)
     FOR NO KEY UPDATE)
   SELECT latest.*, noted.held AS held_lead
   FROM (SELECT set_config('${HELD_LEAD}', coalesce((SELECT id FROM latest), ''), true) AS held) AS noted
   LEFT JOIN latest ON true`,
);
const heldValues = statement<FieldValueRow>(
  'holds.values',
  `SELECT * FROM custom_field_values WHERE lead_id = ${setting(HELD_LEAD)} AND field_id = ANY($1::text[])`,
);

export function pgHoldRepo(sql: Sql): HoldRepo {
  // On the pool each statement may go to another connection, in a transaction of its own: the
  // settings would not carry, and the reads would silently find nothing.
  const inUnit = () => {
    if (!sql.later) throw new Error('holds.* runs inside a unit of work: its statements pass ids on through settings of the transaction');
  };
  /** The latest lead and its values, sent behind the person's statement without waiting for it. */
  const latestWithValues = async (fieldIds: readonly string[]) => {
    const [lead, values] = await Promise.all([
      latestLocked.one(sql),
      fieldIds.length > 0 ? heldValues.rows(sql, [...new Set(fieldIds)]) : Promise.resolve([]),
    ]);
    return { latest: lead?.id ? rowToLead(lead) : null, values: values.map(rowToFieldValue) };
  };
  return {
    async person(workspaceId, integrationId, k, fieldIds) {
      inUnit();
      const [row, held] = await Promise.all([
        matchLocked.one(sql, workspaceId, integrationId, k.externalId, k.phone, norm(k.email)),
        latestWithValues(fieldIds),
      ]);
      checkBound(row, integrationId, k.externalId);
      if (!row?.id || !row.matched_by) return { found: null, locked: null, latest: null, values: [] };
      const locked = row.locked_id === null ? null : rowToContact(Object.fromEntries(CONTACT_COLUMNS.map((c) => [c, row[`locked_${c}`]])) as unknown as ContactRow);
      return { found: { contact: rowToContact(row), by: row.matched_by }, locked, ...held };
    },
    async binding(integrationId, externalId, fieldIds) {
      inUnit();
      const [row, held] = await Promise.all([bound.one(sql, integrationId, externalId), latestWithValues(fieldIds)]);
      checkBound(row, integrationId, externalId);
      if (!row?.id) return { contact: null, latest: null, values: [] };
      return { contact: rowToContact(row), ...held };
    },
  };
}
