// Configuration: the environment parsed once into a typed Config; every bad value is named at once.
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { isAddressOrRange } from './address-ranges.js';

const ADMIN_TOKEN_MIN_LENGTH = 32;
const GENERATE_TOKEN = 'generate one with: openssl rand -base64 32';

/**
 * A token that is a few characters over and over (`aaaa…`, `abcabc…`, `passwordpassword…`) is long
 * without being hard to guess: it needs 10 distinct characters and must not repeat a shorter string.
 */
function isVaried(token: string): boolean {
  if (new Set(token).size < 10) return false;
  for (let period = 1; period <= token.length / 2; period++) {
    if (token.length % period === 0 && token.slice(0, period).repeat(token.length / period) === token) return false;
  }
  return true;
}

/** Words are read case-insensitively (`DEMO_MODE=TRUE`, `LOG_LEVEL=INFO`, `SQLITE_SYNCHRONOUS=full`). */
const lowerCase = (value: unknown) => (typeof value === 'string' ? value.trim().toLowerCase() : value);
const upperCase = (value: unknown) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

/** `10.0.0.5`, `10.1.0.0/16`, `fd00::/8`: what Fastify's trustProxy takes. */
function isAddressOrCidr(value: string): boolean {
  const [address = '', prefix, ...rest] = value.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** postgres:// or postgresql:// with a host, as node-postgres reads it. */
function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const booleanFromEnv = z.preprocess(
  lowerCase,
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], {
      error: 'must be one of true/false, 1/0, yes/no, on/off',
    })
    .transform((value) => ['1', 'true', 'yes', 'on'].includes(value)),
);

/**
 * A whole number within bounds, each way of missing them told precisely: `RATE_LIMIT_PER_MINUTE=0`
 * "must be at least 1", `PORT=70000` "must be at most 65535", `PORT=abc` "must be a whole number from
 * 0 to 65535".
 */
function wholeNumber(min: number, max: number, fallback: number, unit = '') {
  const range = `must be a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max}`;
  return z.coerce
    .number({ error: range })
    .int(range)
    .min(min, `must be at least ${min}${unit ? ` ${unit}` : ''}`)
    .max(max, `must be at most ${max}${unit ? ` ${unit}` : ''}`)
    .default(fallback);
}

/**
 * Defaults of the connection limits. A bot sends its headers in one write and a body under 1 MiB,
 * so 10 s and 30 s are generous; the keep-alive timeout outlasts the 60 s idle timeout of common
 * load balancers, so the gateway never closes a connection a balancer is about to reuse.
 */
export const CONNECTION_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
  maxConnections: 10_000,
} as const;

const milliseconds = (fallback: number) => wholeNumber(100, 600_000, fallback, 'milliseconds');

/** The console's chart and the migration report read 30 days of hourly call counts: fewer are refused. */
export const RETENTION_USAGE_MIN_DAYS = 30;
export const RETENTION_USAGE_DEFAULT_DAYS = 90;
export const RETENTION_ANSWERS_DEFAULT_DAYS = 90;
export const RETENTION_WEBHOOK_EVENTS_DEFAULT_DAYS = 30;
/** How often each replica looks for due webhook deliveries unless WEBHOOK_SEND_EVERY_MS says. */
export const WEBHOOK_SEND_EVERY_MS = 500;
export const RETENTION_WEBHOOK_ATTEMPTS_DEFAULT_DAYS = 14;

/** How long what grows with time is kept (src/retention/, docs/operations/retention.md). */
export interface RetentionSettings {
  /** Hourly call counts older than this many days are rolled up into one row per route. */
  usageDays: number;
  /** Unmapped and invalid answers older than this many days are deleted. */
  answersDays: number;
  /** Webhook events (with their deliveries and attempts) older than this many days are deleted. */
  webhookEventsDays?: number;
  /** Logged webhook delivery attempts older than this many days are deleted. */
  webhookAttemptsDays?: number;
}

export const ConfigSchema = z
  .object({
    PORT: wholeNumber(0, 65535, 3000),
    HOST: z.string().min(1, 'must not be empty').default('127.0.0.1'),
    DATABASE_PATH: z.string().min(1, 'must not be empty').default('data/lead-gateway.db'),
    DATABASE_URL: z
      .string()
      .refine(isPostgresUrl, 'must be a PostgreSQL URL, e.g. postgres://gateway:secret@db.internal:5432/gateway')
      .optional()
      .meta({ description: 'PostgreSQL database of the gateway; unset: the SQLite file at DATABASE_PATH' }),
    DATABASE_POOL_SIZE: wholeNumber(1, 1_000, 10).meta({
      description: 'PostgreSQL connections each gateway process holds at most',
    }),
    DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(100, 600_000, 5_000, 'milliseconds').meta({
      description: 'Longest a PostgreSQL statement or lock wait may take before the request answers 503',
    }),
    RULES_DIR: z.string().min(1, 'must not be empty').default('rules'),
    ADMIN_TOKEN: z
      .string()
      .min(ADMIN_TOKEN_MIN_LENGTH, `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (${GENERATE_TOKEN})`)
      .refine(isVaried, `must not repeat a few characters (${GENERATE_TOKEN})`)
      .optional(),
    ADMIN_TOKEN_NAME: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._@-]{0,63}$/, 'must be 1-64 of a-z 0-9 . _ @ -, starting with a letter or digit')
      .default('automation')
      .meta({ description: 'The name the audit log gives changes made with the shared ADMIN_TOKEN' }),
    TRUST_PROXY: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      )
      .refine(
        (list) => list.every(isAddressOrCidr),
        'must be a comma-separated list of IP addresses or CIDR ranges, e.g. 10.0.0.5,10.1.0.0/16',
      )
      .optional()
      .meta({ description: 'The reverse proxies in front: their X-Forwarded-For gives the client address' }),
    LOG_LEVEL: z
      .preprocess(
        lowerCase,
        z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
          error: 'must be one of fatal, error, warn, info, debug, trace, silent',
        }),
      )
      .default('info'),
    DEMO_MODE: booleanFromEnv.default(false),
    LEGACY_UPSTREAM_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://crm.example.com' })
      .optional()
      .meta({ description: 'Old API to forward legacy reads and actions to; unset: served from the gateway' }),
    UPSTREAM_CONNECT_TIMEOUT_MS: wholeNumber(1, 60_000, 2_000, 'milliseconds'),
    UPSTREAM_TIMEOUT_MS: wholeNumber(1, 300_000, 15_000, 'milliseconds'),
    RATE_LIMIT_PER_MINUTE: wholeNumber(1, 1_000_000, 600),
    // On PostgreSQL: how often each replica settles its quota counts; 0 counts every request in the
    // database (docs/operations/rate-limits.md).
    RATE_LIMIT_SYNC_MS: wholeNumber(0, 1_000, 100, 'milliseconds'),
    AUTH_FAILURES_PER_MINUTE: wholeNumber(1, 1_000_000, 30),
    // FULL is the only setting under which a 2xx survives a power loss (docs/operations/backup.md).
    SQLITE_SYNCHRONOUS: z
      .preprocess(upperCase, z.enum(['FULL', 'NORMAL', 'OFF'], { error: 'must be FULL, NORMAL or OFF' }))
      .default('FULL'),
    READY_MIN_FREE_MB: wholeNumber(0, 1_048_576, 64, 'MiB').meta({
      description: '/readyz reports not ready when the database disk has less free space than this',
    }),
    CONSOLE_SECRET: z
      .string()
      .min(ADMIN_TOKEN_MIN_LENGTH, `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (${GENERATE_TOKEN})`)
      .refine(isVaried, `must not repeat a few characters (${GENERATE_TOKEN})`)
      .optional()
      .meta({
        description: 'Signs the console cookies; the same on every replica. Unset: no console (docs/console.md)',
      }),
    CONSOLE_SECURE_COOKIES: booleanFromEnv.default(true).meta({
      description:
        'false only for a console on plain http during development: cookies without Secure and without the __Host- prefix',
    }),
    // on: every response body is checked against its schema (tests and development; its cost per
    // response is why production leaves it off: docs/operations/configuration.md, "Response checks").
    RESPONSE_CHECKS: z.preprocess(lowerCase, z.enum(['on', 'off'], { error: 'must be on or off' })).default('off'),
    // The client's side of a connection: how long it may take to send a request, how long an idle
    // keep-alive connection is kept, how many connections are held at once (docs/operations/limits.md).
    HEADERS_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.headersTimeoutMs),
    REQUEST_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.requestTimeoutMs),
    KEEP_ALIVE_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.keepAliveTimeoutMs),
    MAX_CONNECTIONS: wholeNumber(1, 1_000_000, CONNECTION_DEFAULTS.maxConnections),
    // What grows with time (docs/operations/retention.md): the console's chart and the migration
    // report read 30 days of hourly counts, so fewer are refused.
    RETENTION_USAGE_DAYS: wholeNumber(RETENTION_USAGE_MIN_DAYS, 36_500, RETENTION_USAGE_DEFAULT_DAYS, 'days').meta({
      description:
        'Hourly call counts older than this are rolled up into one row per route (totals and last call kept)',
    }),
    RETENTION_ANSWERS_DAYS: wholeNumber(1, 36_500, RETENTION_ANSWERS_DEFAULT_DAYS, 'days').meta({
      description: 'Unmapped and invalid answers stored longer than this are deleted (and can no longer be applied)',
    }),
    WEBHOOK_ALLOW_HTTP_HOSTS: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((part) => part.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine(
        (list) => list.every((host) => /^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(host)),
        'must be a comma-separated list of host names, e.g. hooks.internal,10.0.0.7',
      )
      .optional()
      .meta({ description: 'Hosts a webhook endpoint may be reached at over plain http; every other needs https' }),
    WEBHOOK_ALLOW_ADDRESSES: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((part) => part.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine(
        (list) => list.every((entry) => isAddressOrRange(entry)),
        'must be a comma-separated list of addresses or CIDR ranges, e.g. 10.0.0.7,fd00::/8',
      )
      .optional()
      .meta({
        description: 'Addresses or CIDR ranges webhooks may be sent to although they are private, loopback or reserved',
      }),
    WEBHOOK_SEND_EVERY_MS: wholeNumber(50, 60_000, WEBHOOK_SEND_EVERY_MS, 'milliseconds').meta({
      description: 'How often each replica looks for due webhook deliveries',
    }),
    RETENTION_WEBHOOK_EVENTS_DAYS: wholeNumber(1, 36_500, RETENTION_WEBHOOK_EVENTS_DEFAULT_DAYS, 'days').meta({
      description: 'Webhook events older than this are deleted with their deliveries and attempts (no resend after)',
    }),
    RETENTION_WEBHOOK_ATTEMPTS_DAYS: wholeNumber(1, 36_500, RETENTION_WEBHOOK_ATTEMPTS_DEFAULT_DAYS, 'days').meta({
      description: 'Logged webhook delivery attempts older than this are deleted',
    }),
  })
  .superRefine((env, ctx) => {
    if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['HEADERS_TIMEOUT_MS'],
        message: 'must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)',
      });
    }
    if (!env.DEMO_MODE && env.ADMIN_TOKEN === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: 'is required outside demo mode (set ADMIN_TOKEN, or start with --demo / DEMO_MODE=true)',
      });
    }
    if (!env.DEMO_MODE && env.ADMIN_TOKEN === DEMO_ADMIN_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: `is the published demo token; outside demo mode set a token of your own (${GENERATE_TOKEN})`,
      });
    }
  });

/** The admin token in demo mode when none is configured; printed at start. Never valid outside demo mode. */
export const DEMO_ADMIN_TOKEN = 'lgadm_demo-admin-token-not-for-production';

export interface Config {
  port: number;
  host: string;
  databasePath: string;
  /** The PostgreSQL database (DATABASE_URL), or null: the SQLite file at databasePath. */
  databaseUrl: string | null;
  /** PostgreSQL connections per process. */
  databasePoolSize: number;
  /** PostgreSQL's statement_timeout and lock_timeout. */
  databaseStatementTimeoutMs: number;
  rulesDir: string;
  adminToken: string | undefined;
  /** Reverse proxies whose X-Forwarded-For names the client (addresses or CIDRs); null: none. */
  trustProxy: string[] | null;
  /** The audit log's name for changes made with the shared token (named operators have their own). */
  adminTokenName: string;
  logLevel: z.infer<typeof ConfigSchema>['LOG_LEVEL'];
  demo: boolean;
  sqliteSynchronous: z.infer<typeof ConfigSchema>['SQLITE_SYNCHRONOUS'];
  upstream: UpstreamConfig | null;
  /** Requests per minute per integration (all its keys), unless the integration's rules say otherwise. */
  rateLimitPerMinute: number;
  /** On PostgreSQL, how often each replica settles the quota's counts; 0: each request counted in the database. */
  rateLimitSyncMs: number;
  /** Failed authentications per minute per client address before its requests get 429. */
  authFailuresPerMinute: number;
  /** Check every response body against its schema (serializer.ts). */
  checkResponses: boolean;
  /** Free bytes the database disk must keep for /readyz to say ready. */
  readyMinFreeBytes: number;
  connections: ConnectionLimits;
  /** The web console (src/console/); null when CONSOLE_SECRET is unset. */
  console: ConsoleConfig | null;
  /** How long what grows with time is kept (src/retention/). */
  retention: RetentionSettings;
  /** Hosts a webhook endpoint may be reached at over plain http (docs/webhooks.md). */
  webhookAllowHttpHosts: string[];
  /** Addresses or CIDR ranges webhooks may reach although address-policy.ts refuses them. */
  webhookAllowAddresses: string[];
  /** How often each replica looks for due webhook deliveries (src/webhooks/sender.ts). */
  webhookSendEveryMs: number;
}

export interface ConsoleConfig {
  /** Signs the session and CSRF cookies; every replica must have the same. */
  secret: string;
  /** Secure, __Host- cookies (HTTPS); false only on plain http in development. */
  secureCookies: boolean;
}

/** What a client may hold of the server (http-server.ts). */
export interface ConnectionLimits {
  /** From a connection's opening (on a kept-alive one, the next request's first byte) to the end of the headers. */
  headersTimeoutMs: number;
  /** The same start to the end of the body: the whole request. */
  requestTimeoutMs: number;
  /** An idle connection between two requests. */
  keepAliveTimeoutMs: number;
  /** Connections held at once; one more is closed at once. */
  maxConnections: number;
}

export interface UpstreamConfig {
  url: string;
  connectTimeoutMs: number;
  /** For the response headers, and again for each gap in the response body. */
  timeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The environment with a `.env` file's variables added beneath it, and which ones came from the file. */
export interface EnvWithFile {
  env: Record<string, string | undefined>;
  /** The file read, or null when there is none. */
  file: string | null;
  fromFile: ReadonlySet<string>;
}

/**
 * Adds the variables of `path` (a `.env` in the working directory by default) that the environment does
 * not set: a variable given to the process always wins over the file, as with `node --env-file`.
 */
export function withEnvFile(env: Record<string, string | undefined>, path = '.env'): EnvWithFile {
  if (!existsSync(path)) return { env, file: null, fromFile: new Set() };
  const fileVars = parseEnv(readFileSync(path, 'utf8'));
  const fromFile = new Set(Object.keys(fileVars).filter((key) => env[key] === undefined));
  return {
    env: { ...Object.fromEntries([...fromFile].map((key) => [key, fileVars[key]])), ...env },
    file: path,
    fromFile,
  };
}

/**
 * The secrets that may come from a file instead, as container platforms and systemd mount them
 * (docker secrets under /run/secrets, systemd's LoadCredential= under $CREDENTIALS_DIRECTORY): `X_FILE`
 * names the file, whose content is X with one trailing newline dropped.
 */
export const SECRET_FILE_VARIABLES = ['ADMIN_TOKEN', 'CONSOLE_SECRET', 'DATABASE_URL'] as const;

/** The environment with each `X_FILE` read into X; the problems name the variable and path, never the content. */
export function withSecretFiles(env: Record<string, string | undefined>): {
  env: Record<string, string | undefined>;
  problems: string[];
  fromFiles: ReadonlySet<string>;
} {
  const out = { ...env };
  const problems: string[] = [];
  const fromFiles = new Set<string>();
  for (const name of SECRET_FILE_VARIABLES) {
    const path = env[`${name}_FILE`];
    if (path === undefined || path === '') continue;
    // Two sources for one secret: which one wins would be a guess, so neither does.
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name}_FILE and ${name} are both set: set one (the file for a mounted secret)`);
      continue;
    }
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      problems.push(`${name}_FILE: cannot read ${path} (${code})`);
      continue;
    }
    // `echo secret > file` adds a newline; anything else in the file is the secret's own.
    const value = content.replace(/\r?\n$/, '');
    if (value === '') {
      problems.push(`${name}_FILE: ${path} is empty`);
      continue;
    }
    out[name] = value;
    fromFiles.add(name);
  }
  return { env: out, problems, fromFiles };
}

/**
 * Parses environment-style variables; throws a ConfigError that lists every bad value, saying which
 * ones were read from the `.env` file.
 */
export function parseConfig(
  given: Record<string, string | undefined>,
  source?: Pick<EnvWithFile, 'file' | 'fromFile'>,
): Config {
  const secrets = withSecretFiles(given);
  const env = secrets.env;
  const picked = Object.fromEntries(
    Object.keys(ConfigSchema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = ConfigSchema.safeParse(picked);
  // A secret whose file could not be read is reported once, as its file's problem, not again as missing.
  const unread = new Set(SECRET_FILE_VARIABLES.filter((name) => env[`${name}_FILE`] && !secrets.fromFiles.has(name)));
  const issues = [
    ...secrets.problems.map((problem) => ({ name: null, message: problem })),
    ...(result.success
      ? []
      : result.error.issues
          .map((issue) => ({ name: issue.path.join('.') as string | null, message: issue.message }))
          .filter(({ name }) => !unread.has(name as never))),
  ];
  // Which database a process writes to must never be a guess between two settings.
  if (picked.DATABASE_URL !== undefined && picked.DATABASE_PATH !== undefined) {
    issues.push({
      name: 'DATABASE_URL',
      message: 'and DATABASE_PATH are both set: set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both',
    });
  }
  if (!result.success || issues.length > 0) {
    throw new ConfigError(
      issues.map(({ name, message }) => {
        if (name === null) return message;
        const where = secrets.fromFiles.has(name)
          ? ` (read from ${name}_FILE)`
          : source?.file && source.fromFile.has(name)
            ? ` (set in ${source.file})`
            : '';
        return `${name || '(environment)'} ${message}${where}`;
      }),
    );
  }
  const c = result.data;
  return {
    port: c.PORT,
    host: c.HOST,
    databasePath: c.DATABASE_PATH,
    databaseUrl: c.DATABASE_URL ?? null,
    databasePoolSize: c.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
    rulesDir: c.RULES_DIR,
    adminToken: c.ADMIN_TOKEN ?? (c.DEMO_MODE ? DEMO_ADMIN_TOKEN : undefined),
    adminTokenName: c.ADMIN_TOKEN_NAME,
    trustProxy: c.TRUST_PROXY ?? null,
    logLevel: c.LOG_LEVEL,
    demo: c.DEMO_MODE,
    sqliteSynchronous: c.SQLITE_SYNCHRONOUS,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    rateLimitSyncMs: c.RATE_LIMIT_SYNC_MS,
    authFailuresPerMinute: c.AUTH_FAILURES_PER_MINUTE,
    checkResponses: c.RESPONSE_CHECKS === 'on',
    readyMinFreeBytes: c.READY_MIN_FREE_MB * 1024 * 1024,
    connections: {
      headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: c.MAX_CONNECTIONS,
    },
    console:
      c.CONSOLE_SECRET === undefined ? null : { secret: c.CONSOLE_SECRET, secureCookies: c.CONSOLE_SECURE_COOKIES },
    retention: {
      usageDays: c.RETENTION_USAGE_DAYS,
      answersDays: c.RETENTION_ANSWERS_DAYS,
      webhookEventsDays: c.RETENTION_WEBHOOK_EVENTS_DAYS,
      webhookAttemptsDays: c.RETENTION_WEBHOOK_ATTEMPTS_DAYS,
    },
    webhookAllowHttpHosts: c.WEBHOOK_ALLOW_HTTP_HOSTS ?? [],
    webhookAllowAddresses: c.WEBHOOK_ALLOW_ADDRESSES ?? [],
    webhookSendEveryMs: c.WEBHOOK_SEND_EVERY_MS,
    upstream:
      c.LEGACY_UPSTREAM_URL === undefined
        ? null
        : {
            url: c.LEGACY_UPSTREAM_URL,
            connectTimeoutMs: c.UPSTREAM_CONNECT_TIMEOUT_MS,
            timeoutMs: c.UPSTREAM_TIMEOUT_MS,
          },
  };
}
