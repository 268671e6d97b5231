// A one-time value for the page an action redirects to (POST, redirect, GET): the v1 key an action
// issued, shown once by the next page of the same session and never again, on any replica. It waits in
// the session's row (console_sessions.flash) sealed with AES-256-GCM under a key derived from
// CONSOLE_SECRET and the session id: the database keeps only the id's hash, so a copy of the table
// cannot open it; taking it clears the column in the same unit.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Store } from '../store/store.js';
import { idHash } from './session-store.js';

/** What a flash may carry: a key just issued, with the heading that says how it came. */
export const FlashSchema = z.object({
  /** The integration (its id) whose page shows it: another integration's page leaves it waiting. */
  integration: z.string(),
  issued: z.object({ secret: z.string(), prefix: z.string(), heading: z.string() }).optional(),
});
export type Flash = z.infer<typeof FlashSchema>;

const keyFor = (secret: string, sessionId: string): Buffer => createHmac('sha256', secret).update(`console-flash\u0000${sessionId}`).digest();

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
  return {
    /** Keeps `flash` for the session's next page that takes it. */
    put: (request: FastifyRequest, flash: Flash) => store.transact((tx) => tx.consoleSessions.setFlash(idHash(request.session.sessionId), seal(secret, request.session.sessionId, flash))),
    /** The value waiting, if any, now cleared. Reads the database only when the session's row said one waits. */
    async take(request: FastifyRequest): Promise<Flash | null> {
      if (request.session.hasFlash !== true) return null;
      const sealed = await store.transact((tx) => tx.consoleSessions.takeFlash(idHash(request.session.sessionId)));
      request.session.hasFlash = false;
      return sealed === null ? null : unseal(secret, request.session.sessionId, sealed);
    },
  };
}
export type ConsoleFlash = ReturnType<typeof consoleFlash>;
