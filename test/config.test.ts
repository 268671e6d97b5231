// The configuration schema: defaults, every bad value named at once, the admin token rule.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, DEMO_ADMIN_TOKEN, parseConfig } from '../src/config.js';

const token = 'a-production-admin-token-of-32-chars';

describe('parseConfig', () => {
  it('gives defaults for everything but the admin token', () => {
    expect(parseConfig({ ADMIN_TOKEN: token })).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databasePath: 'data/lead-gateway.db',
      databaseUrl: null,
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 5_000,
      rulesDir: 'rules',
      adminToken: token,
      adminTokenName: 'automation',
      trustProxy: null,
      logLevel: 'info',
      demo: false,
      sqliteSynchronous: 'FULL',
      upstream: null,
      rateLimitPerMinute: 600,
      rateLimitSyncMs: 100,
      authFailuresPerMinute: 30,
      checkResponses: false,
      readyMinFreeBytes: 64 * 1024 * 1024,
      connections: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 72_000,
        maxConnections: 10_000,
      },
      console: null,
      retention: { usageDays: 90, answersDays: 90, webhookEventsDays: 30, webhookAttemptsDays: 14 },
      webhookAllowHttpHosts: [],
      webhookAllowAddresses: [],
      webhookSendEveryMs: 500,
    });
  });

  it('reads the retention in days, and refuses to keep hourly call counts fewer than the 30 days the chart and the report read', () => {
    expect(
      parseConfig({ ADMIN_TOKEN: token, RETENTION_USAGE_DAYS: '30', RETENTION_ANSWERS_DAYS: '1' }).retention,
    ).toEqual({ usageDays: 30, answersDays: 1, webhookEventsDays: 30, webhookAttemptsDays: 14 });
    expect(() => parseConfig({ ADMIN_TOKEN: token, RETENTION_USAGE_DAYS: '29', RETENTION_ANSWERS_DAYS: '0' })).toThrow(
      /RETENTION_USAGE_DAYS must be at least 30 days[\s\S]*RETENTION_ANSWERS_DAYS must be at least 1 days/,
    );
  });

  it('reads the webhook retention in days and the hosts allowed plain http, and refuses a bad list or a zero', () => {
    const config = parseConfig({
      ADMIN_TOKEN: token,
      RETENTION_WEBHOOK_EVENTS_DAYS: '7',
      RETENTION_WEBHOOK_ATTEMPTS_DAYS: '2',
      WEBHOOK_ALLOW_HTTP_HOSTS: ' Hooks.Internal , 10.0.0.7 ',
    });
    expect(config.retention).toMatchObject({ webhookEventsDays: 7, webhookAttemptsDays: 2 });
    expect(config.webhookAllowHttpHosts).toEqual(['hooks.internal', '10.0.0.7']);
    expect(() =>
      parseConfig({ ADMIN_TOKEN: token, WEBHOOK_ALLOW_HTTP_HOSTS: 'http://x/', RETENTION_WEBHOOK_EVENTS_DAYS: '0' }),
    ).toThrow(
      /WEBHOOK_ALLOW_HTTP_HOSTS must be a comma-separated list of host names[\s\S]*RETENTION_WEBHOOK_EVENTS_DAYS must be at least 1/,
    );
  });

  it('reads the sending interval and the addresses webhooks may reach, and refuses what is neither', () => {
    const defaults = parseConfig({ ADMIN_TOKEN: token });
    expect(defaults.webhookSendEveryMs).toBe(500);
    expect(defaults.webhookAllowAddresses).toEqual([]);
    const config = parseConfig({
      ADMIN_TOKEN: token,
      WEBHOOK_SEND_EVERY_MS: '2000',
      WEBHOOK_ALLOW_ADDRESSES: ' 127.0.0.1 , FD00::/8 ',
    });
    expect(config.webhookSendEveryMs).toBe(2000);
    expect(config.webhookAllowAddresses).toEqual(['127.0.0.1', 'fd00::/8']);
    expect(() =>
      parseConfig({ ADMIN_TOKEN: token, WEBHOOK_ALLOW_ADDRESSES: '10.0.0.0/33,hooks', WEBHOOK_SEND_EVERY_MS: '10' }),
    ).toThrow(
      /WEBHOOK_ALLOW_ADDRESSES must be a comma-separated list of addresses or CIDR ranges[\s\S]*WEBHOOK_SEND_EVERY_MS must be at least 50/,
    );
  });

  it('turns the console on with CONSOLE_SECRET, Secure cookies unless told otherwise, and refuses a weak secret', () => {
    const secret = 'console-secret-Zq8vN2pXr7LkT4mWb9Yc';
    expect(parseConfig({ ADMIN_TOKEN: token, CONSOLE_SECRET: secret }).console).toEqual({
      secret,
      secureCookies: true,
    });
    expect(
      parseConfig({ ADMIN_TOKEN: token, CONSOLE_SECRET: secret, CONSOLE_SECURE_COOKIES: 'false' }).console,
    ).toEqual({ secret, secureCookies: false });
    expect(() => parseConfig({ ADMIN_TOKEN: token, CONSOLE_SECRET: 'short' })).toThrow(/CONSOLE_SECRET/);
  });

  it('selects PostgreSQL by DATABASE_URL, with its pool and statement limit, and refuses two databases at once', () => {
    const url = 'postgres://gateway:secret@db.internal:5432/gateway';
    expect(
      parseConfig({
        ADMIN_TOKEN: token,
        DATABASE_URL: url,
        DATABASE_POOL_SIZE: '25',
        DATABASE_STATEMENT_TIMEOUT_MS: '2000',
      }),
    ).toMatchObject({
      databaseUrl: url,
      databasePoolSize: 25,
      databaseStatementTimeoutMs: 2_000,
    });
    expect(parseConfig({ ADMIN_TOKEN: token, DATABASE_URL: 'postgresql://db/gateway' }).databaseUrl).toBe(
      'postgresql://db/gateway',
    );
    expect(() => parseConfig({ ADMIN_TOKEN: token, DATABASE_URL: url, DATABASE_PATH: 'data/g.db' })).toThrow(
      'DATABASE_URL and DATABASE_PATH are both set: set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both',
    );
    expect(() =>
      parseConfig({ ADMIN_TOKEN: token, DATABASE_URL: 'mysql://db/gateway', DATABASE_POOL_SIZE: '0' }),
    ).toThrow(
      /DATABASE_URL must be a PostgreSQL URL, e.g. postgres:\/\/gateway:secret@db.internal:5432\/gateway[\s\S]*DATABASE_POOL_SIZE must be at least 1/,
    );
  });

  it('reads the connection limits and refuses a headers timeout longer than the request timeout', () => {
    expect(
      parseConfig({
        ADMIN_TOKEN: token,
        HEADERS_TIMEOUT_MS: '2000',
        REQUEST_TIMEOUT_MS: '5000',
        KEEP_ALIVE_TIMEOUT_MS: '3000',
        MAX_CONNECTIONS: '2500',
      }).connections,
    ).toEqual({
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 5_000,
      keepAliveTimeoutMs: 3_000,
      maxConnections: 2_500,
    });
    expect(() => parseConfig({ ADMIN_TOKEN: token, HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '5000' })).toThrow(
      /HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS/,
    );
    expect(() => parseConfig({ ADMIN_TOKEN: token, REQUEST_TIMEOUT_MS: '0', MAX_CONNECTIONS: '-1' })).toThrow(
      /REQUEST_TIMEOUT_MS must be at least 100 milliseconds[\s\S]*MAX_CONNECTIONS must be at least 1/,
    );
  });

  it('names every bad value at once, with how to fix it', () => {
    try {
      parseConfig({ PORT: '70000', LOG_LEVEL: 'loud', DEMO_MODE: 'maybe', SQLITE_SYNCHRONOUS: 'EXTRA' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT must be at most 65535/);
      expect(problems).toMatch(/LOG_LEVEL must be one of/);
      expect(problems).toMatch(/DEMO_MODE must be one of/);
      expect(problems).toMatch(/SQLITE_SYNCHRONOUS must be FULL, NORMAL or OFF/);
    }
  });

  it('requires an admin token of at least 32 varied characters outside demo mode', () => {
    expect(() => parseConfig({})).toThrow(/ADMIN_TOKEN is required outside demo mode/);
    expect(() => parseConfig({ ADMIN_TOKEN: 'short' })).toThrow(/at least 32 characters/);
    expect(() => parseConfig({ ADMIN_TOKEN: 'a-24-character-token-xyz' })).toThrow(/at least 32 characters/);
    for (const repetitive of ['a'.repeat(40), 'ab'.repeat(20), 'password'.repeat(4), '0123456789'.repeat(4)]) {
      expect(() => parseConfig({ ADMIN_TOKEN: repetitive }), repetitive).toThrow(
        /ADMIN_TOKEN must not repeat a few characters/,
      );
    }
    expect(parseConfig({ ADMIN_TOKEN: 'Xq7w9Lm2Vt4Rp8Zs1Nc6Hb3Kd5Jf0GyA' }).adminToken).toBe(
      'Xq7w9Lm2Vt4Rp8Zs1Nc6Hb3Kd5Jf0GyA',
    );
  });

  it('refuses the published demo admin token outside demo mode', () => {
    expect(() => parseConfig({ ADMIN_TOKEN: DEMO_ADMIN_TOKEN })).toThrow(/ADMIN_TOKEN is the published demo token/);
    expect(parseConfig({ DEMO_MODE: 'true', ADMIN_TOKEN: DEMO_ADMIN_TOKEN }).adminToken).toBe(DEMO_ADMIN_TOKEN);
  });

  it('uses the demo admin token in demo mode when none is set', () => {
    expect(parseConfig({ DEMO_MODE: 'true' })).toMatchObject({ demo: true, adminToken: DEMO_ADMIN_TOKEN });
    expect(parseConfig({ DEMO_MODE: '1', ADMIN_TOKEN: token }).adminToken).toBe(token);
  });

  it('treats an empty variable as unset', () => {
    expect(parseConfig({ ADMIN_TOKEN: token, PORT: '' }).port).toBe(3000);
  });

  it('says precisely what is wrong with a number', () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseConfig({ ADMIN_TOKEN: token, ...env });
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ RATE_LIMIT_PER_MINUTE: '0' })).toEqual(['RATE_LIMIT_PER_MINUTE must be at least 1']);
    expect(problems({ RATE_LIMIT_PER_MINUTE: '2000000' })).toEqual(['RATE_LIMIT_PER_MINUTE must be at most 1000000']);
    expect(problems({ RATE_LIMIT_PER_MINUTE: '1.5' })).toEqual([
      'RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000',
    ]);
    expect(problems({ RATE_LIMIT_SYNC_MS: '1001' })).toEqual(['RATE_LIMIT_SYNC_MS must be at most 1000 milliseconds']);
    expect(problems({ RATE_LIMIT_SYNC_MS: '-1' })).toEqual(['RATE_LIMIT_SYNC_MS must be at least 0 milliseconds']);
    expect(problems({ PORT: 'eighty' })).toEqual(['PORT must be a whole number from 0 to 65535']);
    expect(problems({ UPSTREAM_TIMEOUT_MS: '0' })).toEqual(['UPSTREAM_TIMEOUT_MS must be at least 1 milliseconds']);
    expect(problems({ READY_MIN_FREE_MB: '-1' })).toEqual(['READY_MIN_FREE_MB must be at least 0 MiB']);
  });

  it('reads words whatever their case', () => {
    const c = parseConfig({
      ADMIN_TOKEN: token,
      DEMO_MODE: 'TRUE',
      LOG_LEVEL: 'WARN',
      SQLITE_SYNCHRONOUS: 'full',
      RESPONSE_CHECKS: 'On',
    });
    expect(c).toMatchObject({ demo: true, logLevel: 'warn', sqliteSynchronous: 'FULL', checkResponses: true });
    expect(parseConfig({ ADMIN_TOKEN: token, DEMO_MODE: ' No ' }).demo).toBe(false);
  });

  it('reads the trusted proxies as addresses and CIDR ranges', () => {
    expect(parseConfig({ ADMIN_TOKEN: token, TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      'fd00::/8',
    ]);
    for (const bad of ['10.0.0.300', '10.0.0.0/33', 'proxy.local', '10.0.0.0/8/8']) {
      expect(() => parseConfig({ ADMIN_TOKEN: token, TRUST_PROXY: bad }), bad).toThrow(
        /TRUST_PROXY must be a comma-separated list of IP addresses or CIDR ranges/,
      );
    }
  });
});

describe('secrets from files (X_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const secretFile = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  const consoleSecret = 'a-console-secret-of-32-characters-xyz';
  const databaseUrl = 'postgres://gateway:s3cret-from-a-file@db.internal:5432/gateway';

  it('reads ADMIN_TOKEN_FILE, CONSOLE_SECRET_FILE and DATABASE_URL_FILE, dropping one trailing newline', () => {
    const config = parseConfig({
      ADMIN_TOKEN_FILE: secretFile('admin_token', `${token}\n`),
      CONSOLE_SECRET_FILE: secretFile('console_secret', `${consoleSecret}\r\n`),
      DATABASE_URL_FILE: secretFile('database_url', databaseUrl),
    });
    expect(config.adminToken).toBe(token);
    expect(config.console?.secret).toBe(consoleSecret);
    expect(config.databaseUrl).toBe(databaseUrl);
  });

  it('keeps everything but the last newline: a secret with a space or a second newline is taken as written', () => {
    expect(parseConfig({ ADMIN_TOKEN_FILE: secretFile('spaced', ` ${token}\n\n`) }).adminToken).toBe(` ${token}\n`);
  });

  it('refuses a variable set both ways, naming both and neither value', () => {
    const error = catchConfigError({ ADMIN_TOKEN: token, ADMIN_TOKEN_FILE: secretFile('twice', token) });
    expect(error.problems).toEqual([
      'ADMIN_TOKEN_FILE and ADMIN_TOKEN are both set: set one (the file for a mounted secret)',
    ]);
    expect(error.message).not.toContain(token);
  });

  it('names the variable and the path of a file that is missing, unreadable or empty, in one line each, without the content', () => {
    const missing = join(dir, 'no-such-file');
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const error = catchConfigError({
      ADMIN_TOKEN_FILE: missing,
      DATABASE_URL_FILE: folder,
      CONSOLE_SECRET_FILE: secretFile('empty', '\n'),
    });
    expect(error.problems).toEqual([
      `ADMIN_TOKEN_FILE: cannot read ${missing} (ENOENT)`,
      `CONSOLE_SECRET_FILE: ${join(dir, 'empty')} is empty`,
      `DATABASE_URL_FILE: cannot read ${folder} (EISDIR)`,
    ]);
  });

  it('checks a value read from a file as any other, saying where it came from and never printing it', () => {
    const weak = 'short-token-from-a-file';
    const error = catchConfigError({ ADMIN_TOKEN_FILE: secretFile('weak', `${weak}\n`) });
    expect(error.problems).toEqual([
      expect.stringMatching(/^ADMIN_TOKEN must be at least 32 characters .* \(read from ADMIN_TOKEN_FILE\)$/),
    ]);
    expect(error.message).not.toContain(weak);
  });
});

function catchConfigError(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('parseConfig accepted the configuration');
}
