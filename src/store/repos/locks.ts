// Locks a unit of work takes before it reads what it is about to decide on
// (docs/architecture.md, "Concurrency: what each unit locks").

/** What identifies a person within a workspace, in the matching form (normalized phone, lower-case e-mail). */
export type PersonKey =
  | { kind: 'binding'; integrationId: string; externalId: string }
  | { kind: 'phone'; phone: string }
  | { kind: 'email'; email: string };

/**
 * Locks held until the unit of work ends (commit or rollback); a second unit asking for one waits.
 * Order, so that two units never wait on each other: the integration, then person keys, then rows
 * (a contact, then a lead). A unit takes each kind once, or several of a kind in one call.
 *
 * On SQLite every lock is a no-op: its units run one after the other on the one writer connection,
 * and another process (the CLI) waits for the file's write lock (BEGIN IMMEDIATE).
 */
export interface LockRepo {
  /**
   * Locks a would-be person's keys: two units matching the same person (by the same binding, phone or
   * e-mail) run one after the other, so the second finds the contact the first created instead of
   * creating another. All keys in one call, in one order whoever asks. On PostgreSQL it may resolve
   * before the locks are granted (sent without waiting, its answer unread): the unit's next statement
   * runs only once they are, and a failure to take them fails that statement.
   */
  persons(workspaceId: string, keys: readonly PersonKey[]): Promise<void>;
  /** Locks an integration's keys and migration state: its moves run one after the other. */
  integration(integrationId: string): Promise<void>;
  /** Locks the tags a workspace's bots created: two units counting them before adding one run one after the other. */
  legacyTags(workspaceId: string): Promise<void>;
  /**
   * Locks the names the audit log gives to people (console users and admin tokens share them): two
   * units each checking that a name is free in the other table, then taking it, run one after the other.
   */
  operatorNames(): Promise<void>;
  /**
   * Locks the webhook endpoints: a change to one (read, decide, write) and an endpoint counted against
   * the caps before it is added run one after the other.
   */
  webhookEndpoints(): Promise<void>;
  /**
   * Takes the retention job's lock if no other unit holds it, without waiting: true when taken (held
   * to the unit's end), false when another process's run holds it.
   */
  tryRetention(): Promise<boolean>;
}

/** The keys a submitted person is locked by: its binding to the integration, its phone, its e-mail. */
export function personKeysOf(
  integrationId: string,
  p: { externalId: string | null; phone: string | null; email: string | null },
): PersonKey[] {
  const keys: PersonKey[] = [];
  if (p.externalId !== null) keys.push({ kind: 'binding', integrationId, externalId: p.externalId });
  if (p.phone !== null) keys.push({ kind: 'phone', phone: p.phone });
  if (p.email !== null) keys.push({ kind: 'email', email: p.email });
  return keys;
}

/**
 * The names of a person's keys, distinct and sorted: what an engine hashes into its lock ids. JSON
 * arrays, so that no member's text can pass for another's.
 */
export function personLockNames(workspaceId: string, keys: readonly PersonKey[]): string[] {
  const names = keys.map((k) =>
    JSON.stringify(
      k.kind === 'binding'
        ? ['person', workspaceId, 'binding', k.integrationId, k.externalId]
        : ['person', workspaceId, k.kind, k.kind === 'phone' ? k.phone : k.email],
    ),
  );
  return [...new Set(names)].sort();
}

export const integrationLockName = (integrationId: string): string => JSON.stringify(['integration', integrationId]);

export const legacyTagsLockName = (workspaceId: string): string => JSON.stringify(['legacy-tags', workspaceId]);
export const OPERATOR_NAMES_LOCK = JSON.stringify(['operator-names']);
export const WEBHOOK_ENDPOINTS_LOCK = JSON.stringify(['webhook-endpoints']);
export const retentionLockName = JSON.stringify(['retention']);
