// Console passwords, stored as scrypt hashes (node's own crypto: no native module to compile).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt at N=2^15, r=8, p=3: one of OWASP's listed equivalents of N=2^17, r=8, p=1 (the Password
 * Storage Cheat Sheet), at a quarter of the memory: 32 MiB per hash instead of 128, so a burst of
 * sign-ins cannot exhaust a small replica's memory. Each hash costs a deliberate amount of CPU
 * (docs/console.md gives a measured figure); it runs on libuv's thread pool, never on the event loop.
 */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Node refuses scrypt above 32 MiB of memory unless told more: 128 * N * r is exactly 32 MiB here. */
const MAX_MEMORY = 64 * 1024 * 1024;

/** The fewest characters a console password may have (NIST SP 800-63B: at least 8; we ask 12). */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

const derive = (password: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...params, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

/** `scrypt$N$r$p$salt$hash` (base64url): a hash keeps its parameters, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * What an unknown user name is checked against, so that it costs the same scrypt run as a known one.
 * Random bytes in the hash's place, not the hash of a password: no password matches it, and it is
 * ready at start (made lazily, the first unknown name after each start paid for two scrypt runs).
 */
export const DECOY_HASH = [
  'scrypt',
  SCRYPT_PARAMS.N,
  SCRYPT_PARAMS.r,
  SCRYPT_PARAMS.p,
  randomBytes(SALT_BYTES).toString('base64url'),
  randomBytes(KEY_BYTES).toString('base64url'),
].join('$');
