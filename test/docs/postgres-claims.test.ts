// What the docs say about the PostgreSQL deployment, held against the code and the installed driver:
// every variable is in the configuration reference's table and in .env.example, which must parse beside
// DATABASE_URL; the defaults, limits, messages and TLS modes the operations pages name are the ones in force.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { parse as parseConnectionString } from 'pg-connection-string';
import { ConfigError, ConfigSchema, parseConfig } from '../../src/config.js';
import { DEFAULT_POOL_SIZE } from '../../src/store/postgres/pool.js';
import { MIGRATION_LOCK_KEY, MIGRATION_TIMEOUT_MS } from '../../src/store/postgres/migrations.js';
import { MAX_UNIT_ATTEMPTS } from '../../src/store/postgres/postgres-store.js';
import { REPLICAS_LOOK_MS, SHARED_LIMITS_RETRY_MS } from '../../src/rate-limit/shared-limiter.js';
import { shareOfLimit } from '../../src/rate-limit/quota.js';
import { AUTH_FAILURES_LINES, QUOTA_LINES } from '../../src/rate-limit/shared-fallback.js';
import { DEFAULT_SYNC_MS, quotaTolerance, unseenBudget } from '../../src/rate-limit/settled-quota.js';
import { ROOT } from './doc-commands.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** The text with its line breaks and indentation folded into single spaces, as a reader sees it. */
const flat = (text: string) => text.replace(/\s+/g, ' ');
/** The operations pages (docs/operations/), each as a reader sees it. */
const page = (name: string) => flat(read(`docs/operations/${name}.md`));
const postgresql = page('postgresql');
const upgrades = page('upgrades');
const rateLimits = page('rate-limits');
const TOKEN = 'a-long-and-varied-admin-token-0123456789';
const URL_EXAMPLE = 'postgres://gateway:secret@db.internal:5432/gateway';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

describe('the configuration as documented', () => {
  const variables = Object.keys(ConfigSchema.shape);

  it("names every variable in the configuration reference's table and in .env.example", () => {
    const reference = read('docs/operations/configuration.md');
    const example = read('.env.example');
    expect(variables.filter((name) => !reference.includes(`| \`${name}\` |`))).toEqual([]);
    expect(variables.filter((name) => !new RegExp(`^#?${name}=`, 'm').test(example))).toEqual([]);
  });

  it('.env.example parses as it is, and with DATABASE_URL added: it sets no DATABASE_PATH that would clash', () => {
    const example = parseEnv(read('.env.example'));
    expect(problemsOf({ ...example, ADMIN_TOKEN: TOKEN })).toEqual([]);
    expect(problemsOf({ ...example, ADMIN_TOKEN: TOKEN, DATABASE_URL: URL_EXAMPLE })).toEqual([]);
  });

  it('refuses DATABASE_URL beside DATABASE_PATH with the words docs/operations/postgresql.md quotes', () => {
    const [problem] = problemsOf({ ADMIN_TOKEN: TOKEN, DATABASE_URL: URL_EXAMPLE, DATABASE_PATH: 'x.db' });
    expect(problem).toMatch(/^DATABASE_URL and DATABASE_PATH are both set/);
    expect(postgresql).toContain(problem);
    // An empty DATABASE_PATH counts as unset; the container image sets none (test/artefacts.test.ts).
    expect(problemsOf({ ADMIN_TOKEN: TOKEN, DATABASE_URL: URL_EXAMPLE, DATABASE_PATH: '' })).toEqual([]);
    expect(postgresql).toContain('so `-e DATABASE_URL=…` alone selects PostgreSQL there');
  });

  it('has the PostgreSQL defaults and bounds the docs give', () => {
    const config = parseConfig({ ADMIN_TOKEN: TOKEN, DATABASE_URL: URL_EXAMPLE });
    expect(config.databasePoolSize).toBe(DEFAULT_POOL_SIZE);
    expect(postgresql).toContain(`| \`DATABASE_POOL_SIZE\` | \`${config.databasePoolSize}\` |`);
    expect(postgresql).toContain(`| \`DATABASE_STATEMENT_TIMEOUT_MS\` | \`${config.databaseStatementTimeoutMs}\` |`);
    expect(postgresql).toContain(`(${config.databaseStatementTimeoutMs / 1000} s)`);
    expect(problemsOf({ ADMIN_TOKEN: TOKEN, DATABASE_POOL_SIZE: '1001' })).toEqual([
      'DATABASE_POOL_SIZE must be at most 1000',
    ]);
    expect(postgresql).toContain('(1 to 1,000)');
    expect(problemsOf({ ADMIN_TOKEN: TOKEN, DATABASE_STATEMENT_TIMEOUT_MS: '99' })).toEqual([
      'DATABASE_STATEMENT_TIMEOUT_MS must be at least 100 milliseconds',
    ]);
    expect(problemsOf({ ADMIN_TOKEN: TOKEN, DATABASE_STATEMENT_TIMEOUT_MS: '600001' })).toEqual([
      'DATABASE_STATEMENT_TIMEOUT_MS must be at most 600000 milliseconds',
    ]);
    expect(postgresql).toContain('(100 to 600,000 ms)');
  });
});

describe('the operations pages on PostgreSQL', () => {
  it('names the migration lock as pg_locks shows it, and the migration and retry limits', () => {
    const key = MIGRATION_LOCK_KEY;
    expect(upgrades).toContain(`key \`${key}\``);
    expect(upgrades).toContain(`\`classid = ${key >> 32n}\`, \`objid = ${key & 0xffffffffn}\``);
    expect(MIGRATION_TIMEOUT_MS).toBe(30 * 60_000);
    expect(upgrades).toContain('`MIGRATION_TIMEOUT_MS` (30 minutes)');
    expect(postgresql).toContain(`up to ${MAX_UNIT_ATTEMPTS} runs in all (\`MAX_UNIT_ATTEMPTS\`)`);
  });

  it('quotes the refusal of a newer schema as the migrations word it', () => {
    const source = read('src/store/postgres/migrations.ts');
    const words =
      /`(the database schema is at version \$\{newest\}, newer than this gateway's \$\{known\}: [^`]+)`/.exec(
        source,
      )?.[1];
    expect(words).toBeDefined();
    expect(upgrades).toContain(words!.replace('${newest}', '2').replace('${known}', '1'));
  });

  it('describes the TLS modes as the installed driver reads them', () => {
    const ssl = (query: string) => parseConnectionString(`${URL_EXAMPLE}?${query}`).ssl;
    // verify-full and its aliases: TLS with Node's checks of the chain and the host name; the aliases
    // print the driver's SECURITY WARNING (held back here, so the test's output stays clean).
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    for (const mode of ['verify-full', 'require', 'prefer', 'verify-ca'])
      expect(ssl(`sslmode=${mode}`), mode).toEqual({});
    expect(warn.mock.calls.map(([message]) => String(message).slice(0, 16))).toEqual(['SECURITY WARNING']);
    warn.mockRestore();
    expect(ssl('sslmode=disable')).toBe(false);
    expect(ssl('sslmode=no-verify')).toEqual({ rejectUnauthorized: false });
    expect(ssl('uselibpqcompat=true&sslmode=require')).toEqual({ rejectUnauthorized: false });
    expect(parseConnectionString(URL_EXAMPLE).ssl).toBeUndefined();
    for (const row of [
      '| nothing, or `sslmode=disable` | No TLS. |',
      '| `sslmode=verify-full` |',
      '| `sslmode=require`, `prefer` or `verify-ca` | The same as `verify-full`',
      '| `sslmode=no-verify` | TLS without checking the certificate',
      '| `uselibpqcompat=true` |',
    ]) {
      expect(postgresql).toContain(row);
    }
  });

  it("describes the shared rate limits' fallback with the messages, periods and share in force", () => {
    for (const message of [...Object.values(QUOTA_LINES), ...Object.values(AUTH_FAILURES_LINES)])
      expect(rateLimits).toContain(`"msg":"${message}"`);
    expect(rateLimits).toContain(`\`SHARED_LIMITS_RETRY_MS\` (${SHARED_LIMITS_RETRY_MS / 1000} s)`);
    expect(rateLimits).toContain(`\`REPLICAS_LOOK_MS\` (${REPLICAS_LOOK_MS / 1000} s)`);
    // The share of what the limit left, rounded down, on top of the total last read: 0 below one unit a replica.
    expect(rateLimits).toContain('`floor((N - S) / replicas)`');
    expect(rateLimits).toContain('`floor(N / replicas)` when it had read nothing');
    const alone = { used: 1, resetAt: Date.now() + 1_000, localOnly: true };
    expect([
      shareOfLimit(30, { ...alone, replicas: 2 }),
      shareOfLimit(30, { ...alone, replicas: 4 }),
      shareOfLimit(2, { ...alone, replicas: 3 }),
    ]).toEqual([15, 7, 0]);
    expect([
      shareOfLimit(30, { ...alone, settled: 20, replicas: 1 }),
      shareOfLimit(30, { ...alone, settled: 20, replicas: 2 }),
      shareOfLimit(30, { ...alone, settled: 35, replicas: 2 }),
    ]).toEqual([30, 25, 35]);
    expect(shareOfLimit(30, { used: 1, resetAt: Date.now() })).toBe(30);
  });

  it("states the settled quota's interval, budget and tolerance as the code computes them", () => {
    expect(rateLimits).toContain(`| \`RATE_LIMIT_SYNC_MS\` | \`${DEFAULT_SYNC_MS}\` |`);
    expect(parseConfig({ ADMIN_TOKEN: 'a-valid-admin-token-0123456789abcdefgh' }).rateLimitSyncMs).toBe(
      DEFAULT_SYNC_MS,
    );
    expect(rateLimits).toContain('**Tolerance: at most max(10% of the limit, R - 1) requests past the limit**');
    expect(rateLimits).toContain('`max(floor(limit × 10% / R), 1)`');
    expect([unseenBudget(600, 3), quotaTolerance(600, 3)]).toEqual([20, 40]);
    expect(rateLimits).toContain('600 a minute on 3 replicas, budget 20, at most 40 more');
    expect([unseenBudget(30, 2), quotaTolerance(30, 2)]).toEqual([1, 1]);
    expect(rateLimits).toContain('30 a minute on 2 replicas, budget 1, at most 1 more');
    // The documented bound holds for every limit and number of replicas, not only the examples.
    const over = [];
    for (let limit = 1; limit <= 2_000; limit++) {
      for (let replicas = 1; replicas <= 20; replicas++) {
        if (quotaTolerance(limit, replicas) > Math.max(Math.floor(limit / 10), replicas - 1))
          over.push({ limit, replicas });
      }
    }
    expect(over).toEqual([]);
  });
});
