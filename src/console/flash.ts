// A one-time value for the page an action redirects to (POST, redirect, GET): the v1 key an action
// issued, shown once by the next page of the same session that renders, and never again, on any
// replica. It waits in the session's row (console_sessions.flash) sealed with AES-256-GCM under a key
// derived from CONSOLE_SECRET and the session id: the database keeps only the id's hash, so a copy of
// the table cannot open it. The page reads it first and clears it once rendered: a page that fails on
// the way (a store blip) leaves it for the next one, so a live key is never lost before anyone saw it.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Repos, Store } from '../store/store.js';
import { idHash } from './session-store.js';
import { AppError } from '../errors.js';

/** A key just issued, waiting for its integration's page, with the heading that says how it came. */
export const WaitingKeySchema = z.object({
  /** The integration (its id) whose page shows it: another integration's page leaves it waiting. */
  integration: z.string(),
  keyId: z.string(),
  secret: z.string(),
  prefix: z.string(),
  heading: z.string(),
});
export type WaitingKey = z.infer<typeof WaitingKeySchema>;

/**
 * Keys issued in one session that wait to be shown. Every key issued waits until a page shows it:
 * a second key issued in another tab before the first was shown waits beside it, never in its place.
 * Past this many a further issue is refused, and its key undone (`keep`).
 */
export const WAITING_KEYS_MAX = 10;

/**
 * What a flash carries: the keys waiting, the oldest first. A value sealed by the release before (one
 * key, without its id) is read as one waiting key, so that a key issued across an upgrade is shown.
 */
export const FlashSchema = z.union([
  z.object({ keys: z.array(WaitingKeySchema) }),
  z
    .object({
      integration: z.string(),
      issued: z.object({ secret: z.string(), prefix: z.string(), heading: z.string() }).optional(),
    })
    .transform((old) => ({ keys: old.issued ? [{ integration: old.integration, keyId: '', ...old.issued }] : [] })),
]);
export type Flash = z.output<typeof FlashSchema>;

const keyFor = (secret: string, sessionId: string): Buffer =>
  createHmac('sha256', secret).update(`console-flash\u0000${sessionId}`).digest();

export function seal(secret: string, sessionId: string, flash: Flash): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret, sessionId), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

/** The flash, or null when it was sealed for another session or under another secret (nothing is shown). */
export function unseal(secret: string, sessionId: string, sealed: string): Flash | null {
  try {
    const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret, sessionId), iv!);
    decipher.setAuthTag(tag!);
    const text = Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
    return FlashSchema.parse(JSON.parse(text));
  } catch {
    return null;
  }
}

export function consoleFlash(store: Store, secret: string) {
  const opened = (request: FastifyRequest, sealed: string | null) =>
    sealed === null ? null : unseal(secret, request.session.sessionId, sealed);
  /** The keys waiting in the session's row, if any; reads the database only when the row said one waits. */
  const waiting = async (request: FastifyRequest): Promise<WaitingKey[]> => {
    if (request.session.hasFlash !== true) return [];
    return (
      opened(request, await store.readOne((r) => r.consoleSessions.peekFlash(idHash(request.session.sessionId))))
        ?.keys ?? []
    );
  };
  /** Changes the keys waiting, in the caller's unit: read, changed, written back (or cleared when none is left). */
  const change = async (tx: Repos, request: FastifyRequest, fn: (keys: WaitingKey[]) => WaitingKey[]) => {
    const hash = idHash(request.session.sessionId);
    const keys = fn(opened(request, await tx.consoleSessions.takeFlash(hash))?.keys ?? []);
    if (keys.length > 0) await tx.consoleSessions.setFlash(hash, seal(secret, request.session.sessionId, { keys }));
  };
  return {
    /**
     * Keeps the key for the session's next page of its integration, beside any key waiting already, in
     * the unit that issues it (migration/service.ts, `WithIssued`): the key stands only if it waits.
     * Noted apart as not shown, with its session's hash: should the session end before a page shows
     * it, retention revokes it (`revokeNeverShown`).
     */
    async keep(tx: Repos, request: FastifyRequest, key: WaitingKey): Promise<void> {
      await change(tx, request, (keys) => {
        // Refused in the unit that issues the key: the key is undone with it.
        if (keys.length >= WAITING_KEYS_MAX) {
          throw new AppError(
            'limit-reached',
            `${WAITING_KEYS_MAX} keys issued in this session have not been shown yet: open their integrations' pages to see them, then issue another.`,
          );
        }
        return [...keys, key];
      });
      const at = new Date().toISOString();
      await tx.consoleSessions.holdUnshown({
        keyId: key.keyId,
        integrationId: key.integration,
        prefix: key.prefix,
        idHash: idHash(request.session.sessionId),
        at,
      });
    },
    /** The keys waiting for this integration's page, left in place (`shown` clears them). */
    async peek(request: FastifyRequest, integrationId: string): Promise<WaitingKey[]> {
      return (await waiting(request)).filter((k) => k.integration === integrationId);
    },
    /**
     * Clears the keys once the page that shows them is rendered, before it is sent; a key put
     * meanwhile (an action in another tab) stays for its own page.
     */
    shown: (request: FastifyRequest, shownKeys: readonly WaitingKey[]) => {
      const gone = new Set(shownKeys.map((k) => k.secret));
      return store.transact(async (tx) => {
        await change(tx, request, (keys) => keys.filter((k) => !gone.has(k.secret)));
        // A key sealed by the release before has no id here, and no note either.
        await tx.consoleSessions.shownUnshown(shownKeys.map((k) => k.keyId).filter((id) => id !== ''));
      });
    },
  };
}
export type ConsoleFlash = ReturnType<typeof consoleFlash>;
