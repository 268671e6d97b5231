// The PostgreSQL repositories on one connection (a unit's client) or on the pool (readOne).
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
import { pgTestMatchRepo } from './test-matches.js';
import { pgScheduleRepo } from './schedules.js';
import { pgWebhookRepo } from './webhooks.js';
import { pgBrownoutRepo } from './brownouts.js';

/**
 * Each repository built when the unit first uses it: a unit is opened per request and uses a few of
 * them, and building them all (their closures, the state repo's spread of porting's) was a measurable
 * part of a new lead's CPU (bench/results/LOG.md, "The gateway's CPU on PostgreSQL").
 */
class UnitRepos implements Repos {
  #contacts?: Repos['contacts'];
  #leads?: Repos['leads'];
  #submissions?: Repos['submissions'];
  #keys?: Repos['keys'];
  #fieldValues?: Repos['fieldValues'];
  #answers?: Repos['answers'];
  #states?: Repos['states'];
  #legacyTags?: Repos['legacyTags'];
  #adminCredentials?: Repos['adminCredentials'];
  #leadPages?: Repos['leadPages'];
  #leadViews?: Repos['leadViews'];
  #consoleUsers?: Repos['consoleUsers'];
  #consoleSessions?: Repos['consoleSessions'];
  #testMatches?: Repos['testMatches'];
  #schedules?: Repos['schedules'];
  #webhooks?: Repos['webhooks'];
  #brownouts?: Repos['brownouts'];
  #locks?: Repos['locks'];
  #holds?: Repos['holds'];
  constructor(private readonly sql: Sql) {}
  get contacts() {
    return (this.#contacts ??= pgContactRepo(this.sql));
  }
  get leads() {
    return (this.#leads ??= pgLeadRepo(this.sql));
  }
  get submissions() {
    return (this.#submissions ??= pgSubmissionRepo(this.sql));
  }
  get keys() {
    return (this.#keys ??= pgKeyRepo(this.sql));
  }
  get fieldValues() {
    return (this.#fieldValues ??= pgFieldValueRepo(this.sql));
  }
  get answers() {
    return (this.#answers ??= pgAnswerRepo(this.sql));
  }
  get states() {
    return (this.#states ??= pgStateRepo(this.sql));
  }
  get legacyTags() {
    return (this.#legacyTags ??= pgLegacyTagRepo(this.sql));
  }
  get adminCredentials() {
    return (this.#adminCredentials ??= pgAdminCredentialRepo(this.sql));
  }
  get leadPages() {
    return (this.#leadPages ??= pgLeadPageRepo(this.sql));
  }
  get leadViews() {
    return (this.#leadViews ??= pgLeadViewRepo(this.sql));
  }
  get consoleUsers() {
    return (this.#consoleUsers ??= pgConsoleUserRepo(this.sql));
  }
  get consoleSessions() {
    return (this.#consoleSessions ??= pgConsoleSessionRepo(this.sql));
  }
  get testMatches() {
    return (this.#testMatches ??= pgTestMatchRepo(this.sql));
  }
  get schedules() {
    return (this.#schedules ??= pgScheduleRepo(this.sql));
  }
  get webhooks() {
    return (this.#webhooks ??= pgWebhookRepo(this.sql));
  }
  get brownouts() {
    return (this.#brownouts ??= pgBrownoutRepo(this.sql));
  }
  get locks() {
    return (this.#locks ??= pgLockRepo(this.sql));
  }
  get holds() {
    return (this.#holds ??= pgHoldRepo(this.sql));
  }
}

export const reposFor = (sql: Sql): Repos => new UnitRepos(sql);
