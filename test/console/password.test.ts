// Console password hashes: what is stored, what verifies, and the decoy an unknown user name is checked against.
import { describe, expect, it } from 'vitest';
import { DECOY_HASH, SCRYPT_PARAMS, hashPassword, verifyPassword } from '../../src/console/password.js';

const paramsOf = (hash: string) => hash.split('$').slice(0, 4).join('$');

describe('console passwords', () => {
  it('stores scrypt with its parameters, and verifies only the right password', async () => {
    const hash = await hashPassword('a long enough passphrase');
    expect(paramsOf(hash)).toBe(`scrypt$${SCRYPT_PARAMS.N}$${SCRYPT_PARAMS.r}$${SCRYPT_PARAMS.p}`);
    expect(await verifyPassword('a long enough passphrase', hash)).toBe(true);
    expect(await verifyPassword('a long enough passphrasE', hash)).toBe(false);
  });

  it('checks an unknown name against a decoy of the same cost that nothing matches', async () => {
    // The same parameters as a real hash: the scrypt run for an unknown name costs what a known one costs.
    expect(paramsOf(DECOY_HASH)).toBe(paramsOf(await hashPassword('x'.repeat(12))));
    for (const guess of ['', 'password', 'a long enough passphrase'])
      expect(await verifyPassword(guess, DECOY_HASH)).toBe(false);
  });
});
