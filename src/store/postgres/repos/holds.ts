// A submitted person and what its unit decides on, found and locked in one statement: the PL/pgSQL
// function `lead_gateway_hold` (migration 23) matches the person, locks its row, then its latest lead,
// then reads the stored values of the fields asked for.
//
// Why a function and not one query: at READ COMMITTED a query reads as of its start. A lock it waits
// for is granted later, and what the lock's holder committed meanwhile (a lead it created, a value it
// wrote) stays invisible to the rest of that query. Inside a volatile function each query takes a
// snapshot of its own at its start, so each read that must come after a lock is a query of its own,
// started once the lock before it is held: the person keys' advisory locks (taken in ascending order of
// their ids, as locks.ts takes them), then the match and the person's row lock, then its latest lead's
// (which must see a lead the person's last writer made), then the field values (which must see a value
// the lead's last writer wrote).
import type { HoldRepo } from '../../repos/holds.js';
import type { MatchedKey } from '../../repos/contacts.js';
import {
  rowToContact,
  rowToFieldValue,
  rowToLead,
  type ContactRow,
  type FieldValueRow,
  type LeadRow,
} from '../../sql-rows.js';
import { personKeysOf, personLockNames } from '../../repos/locks.js';
import { statement, type Sql } from '../sql.js';
import { checkBound, norm, type BoundRow } from './contacts.js';

interface Held {
  found: (BoundRow & { matched_by: MatchedKey }) | null;
  locked?: ContactRow | null;
  latest?: LeadRow | null;
  values?: FieldValueRow[];
}

const hold = statement<{ held: Held }>(
  'holds.hold',
  'SELECT lead_gateway_hold($1, $2, $3, $4, $5, $6, $7::text[], $8::text[]) AS held',
);

export function pgHoldRepo(sql: Sql): HoldRepo {
  // On the pool the function would run in a transaction of its own: its row locks would end with it.
  const inUnit = () => {
    if (!sql.later) throw new Error('holds.* runs inside a unit of work: the locks it takes last until the unit ends');
  };
  const held = async (
    person: boolean,
    workspaceId: string | null,
    integrationId: string,
    keys: { externalId: string | null; phone: string | null; email: string | null },
    fieldIds: readonly string[],
  ) => {
    inUnit();
    const { externalId, phone, email } = keys;
    const locks = person ? personLockNames(workspaceId!, personKeysOf(integrationId, keys)) : [];
    const row = (await hold.carrying(
      sql,
      person,
      workspaceId,
      integrationId,
      externalId,
      phone,
      norm(email),
      [...new Set(fieldIds)],
      locks,
    ))!.held;
    checkBound(row.found, integrationId, externalId);
    return {
      found: row.found?.id ? row.found : null,
      locked: row.locked ? rowToContact(row.locked) : null,
      latest: row.latest ? rowToLead(row.latest) : null,
      values: (row.values ?? []).map(rowToFieldValue),
    };
  };
  return {
    async person(workspaceId, integrationId, k, fieldIds) {
      const { found, ...rest } = await held(true, workspaceId, integrationId, k, fieldIds);
      if (!found?.id) return { found: null, locked: null, latest: null, values: [] };
      return { found: { contact: rowToContact(found as ContactRow), by: found.matched_by }, ...rest };
    },
    async binding(integrationId, externalId, fieldIds) {
      const { found, latest, values } = await held(
        false,
        null,
        integrationId,
        { externalId, phone: null, email: null },
        fieldIds,
      );
      if (!found?.id) return { contact: null, latest: null, values: [] };
      return { contact: rowToContact(found as ContactRow), latest, values };
    },
  };
}
