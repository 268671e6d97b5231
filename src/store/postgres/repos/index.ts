// The PostgreSQL repositories on one connection (a unit's client) or on the pool (peek).
import type { Repos } from '../../store.js';
import type { Sql } from '../sql.js';
import { pgContactRepo } from './contacts.js';
import { pgLeadRepo } from './leads.js';
import { pgSubmissionRepo } from './submissions.js';
import { pgKeyRepo } from './keys.js';
import { pgFieldValueRepo } from './field-values.js';
import { pgAnswerRepo } from './answers.js';
import { pgStateRepo } from './states.js';
import { pgLegacyTagRepo } from './legacy-tags.js';
import { pgAdminCredentialRepo } from './admin-credentials.js';
import { pgLeadPageRepo } from './lead-pages.js';
import { pgLockRepo } from './locks.js';
import { pgHoldRepo } from './holds.js';
import { pgLeadViewRepo } from './lead-views.js';
import { pgConsoleSessionRepo, pgConsoleUserRepo } from './console.js';

export const reposFor = (sql: Sql): Repos => ({
  contacts: pgContactRepo(sql),
  leads: pgLeadRepo(sql),
  submissions: pgSubmissionRepo(sql),
  keys: pgKeyRepo(sql),
  fieldValues: pgFieldValueRepo(sql),
  answers: pgAnswerRepo(sql),
  states: pgStateRepo(sql),
  legacyTags: pgLegacyTagRepo(sql),
  adminCredentials: pgAdminCredentialRepo(sql),
  leadPages: pgLeadPageRepo(sql),
  leadViews: pgLeadViewRepo(sql),
  consoleUsers: pgConsoleUserRepo(sql),
  consoleSessions: pgConsoleSessionRepo(sql),
  locks: pgLockRepo(sql),
  holds: pgHoldRepo(sql),
});
