// Row identifiers: UUIDv7, time-ordered, so new rows land at the end of every primary-key index.
//
// Random (v4) keys scattered each insert over the whole index: a commit of a few dozen submissions
// dirtied hundreds of pages, and every one of them was written to the WAL and synced. With v7 keys
// the same commit touches the last pages of each index. They are still opaque UUIDs to clients.
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

// One getRandomValues call per id pays WebCrypto's checks every time; a pool refilled 256 ids at a
// time pays them once per 256. The bytes are used once and never handed out twice.
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let next = POOL_IDS;

function pooledRandom(): Uint8Array {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const offset = 16 * next++;
  return pool.subarray(offset, offset + 16);
}

export const newId = (): string => v7({ rng: pooledRandom });
