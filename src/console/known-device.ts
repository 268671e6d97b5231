// The known-device cookie: a browser that signed in as a name before carries a tag for that name,
// so guesses sent from anywhere else cannot lock the real person out (OWASP's "device cookies").
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a browser stays known for a name after its last password sign-in as that name. */
export const KNOWN_DEVICE_MAX_AGE_S = 90 * 24 * 60 * 60;
/** Names one browser is known for (a shared desk): the latest sign-ins first, the oldest dropped. */
export const KNOWN_NAMES_PER_DEVICE = 5;
/** A tag is an HMAC-SHA-256 in base64url: 43 characters; anything else in the cookie is ignored. */
const TAG = /^[A-Za-z0-9_-]{43}$/;

/**
 * The tag of a name: an HMAC under CONSOLE_SECRET (the same on every replica), so nobody without the
 * secret can make one, and the cookie does not show which names the browser signed in as.
 */
export function knownDevices(secret: string) {
  const tagOf = (name: string) =>
    createHmac('sha256', secret).update(`console known device\0${name}`).digest('base64url');
  const tagsIn = (cookie: string | undefined): string[] =>
    (cookie ?? '')
      .split('.')
      .filter((tag) => TAG.test(tag))
      .slice(0, KNOWN_NAMES_PER_DEVICE);
  return {
    /** The name's tag when the cookie holds it (the browser signed in as this name before), else null. */
    knownAs(cookie: string | undefined, name: string): string | null {
      const wanted = Buffer.from(tagOf(name));
      return tagsIn(cookie).some((tag) => timingSafeEqual(Buffer.from(tag), wanted)) ? wanted.toString() : null;
    },
    /** The cookie's new value after a sign-in as `name`: its tag first, the others kept behind it. */
    remember(cookie: string | undefined, name: string): string {
      const tag = tagOf(name);
      return [tag, ...tagsIn(cookie).filter((other) => other !== tag)].slice(0, KNOWN_NAMES_PER_DEVICE).join('.');
    },
  };
}
