// The PostgreSQL repositories on one connection (a unit's client) or on the pool (peek).
import type { Repos } from '../../store.js';
import type { Sql } from '../sql.js';
import { pgContactRepo } from './contacts.js';
import { pgSubmissionRepo } from './submissions.js';
import { pgKeyRepo } from './keys.js';
import { pgStateRepo } from './states.js';
import { pgLeadRepo } from './leads.js';
import { pgFieldValueRepo } from './field-values.js';
import { pgLeadPageRepo } from './lead-pages.js';

/**
 * A repository not yet written for PostgreSQL: any call fails at once. The engine is not selectable
 * from the configuration until every repository exists (issue 14).
 */
const notYet = <R extends object>(name: string): R =>
  new Proxy({} as R, {
    get: (_target, member) => () => Promise.reject(new Error(`${name}.${String(member)} is not yet implemented on PostgreSQL`)),
  });

export const reposFor = (sql: Sql): Repos => ({
  contacts: pgContactRepo(sql),
  leads: pgLeadRepo(sql),
  submissions: pgSubmissionRepo(sql),
  keys: pgKeyRepo(sql),
  fieldValues: pgFieldValueRepo(sql),
  answers: notYet('answers'),
  states: pgStateRepo(sql),
  legacyTags: notYet('legacyTags'),
  adminCredentials: notYet('adminCredentials'),
  leadPages: pgLeadPageRepo(sql),
});
