// A one-time value for the page an action redirects to (POST, redirect, GET): the v1 key an action
// issued, shown once by the next page of the same session that renders, and never again, on any
// replica. It waits in the session's row (console_sessions.flash) sealed with AES-256-GCM under a key
// derived from CONSOLE_SECRET and the session id: the database keeps only the id's hash, so a copy of
// the table cannot open it. The page reads it first and clears it once rendered: a page that fails on
// the way (a store blip) leaves it for the next one, so a live key is never lost before anyone saw it.
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
  const opened = (request: FastifyRequest, sealed: string | null) => (sealed === null ? null : unseal(secret, request.session.sessionId, sealed));
  return {
    /** Keeps `flash` for the session's next page that takes it. */
    put: (request: FastifyRequest, flash: Flash) => store.transact((tx) => tx.consoleSessions.setFlash(idHash(request.session.sessionId), seal(secret, request.session.sessionId, flash))),
    /** The value waiting, if any, left in place (`shown` clears it). Reads the database only when the session's row said one waits. */
    async peek(request: FastifyRequest): Promise<Flash | null> {
      if (request.session.hasFlash !== true) return null;
      return opened(request, await store.peek((r) => r.consoleSessions.peekFlash(idHash(request.session.sessionId))));
    },
    /**
     * Clears `flash` once the page that shows it is rendered, before it is sent. A newer value put
     * meanwhile (an action in another tab) stays for its own page: taken and put back in one unit.
     */
    async shown(request: FastifyRequest, flash: Flash): Promise<void> {
      const hash = idHash(request.session.sessionId);
      await store.transact(async (tx) => {
        const sealed = await tx.consoleSessions.takeFlash(hash);
        if (sealed !== null && JSON.stringify(opened(request, sealed)) !== JSON.stringify(flash)) await tx.consoleSessions.setFlash(hash, sealed);
      });
    },
  };
}
export type ConsoleFlash = ReturnType<typeof consoleFlash>;
