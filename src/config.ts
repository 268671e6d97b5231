// Configuration: the environment parsed once into a typed Config; every bad value is named at once.
import { z } from 'zod';

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

const booleanFromEnv = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], {
    error: 'must be one of true/false, 1/0, yes/no, on/off',
  })
  .transform((value) => ['1', 'true', 'yes', 'on'].includes(value));

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

const milliseconds = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a whole number of milliseconds from 100 to 600000' })
    .int('must be a whole number of milliseconds from 100 to 600000')
    .min(100, 'must be a whole number of milliseconds from 100 to 600000')
    .max(600_000, 'must be a whole number of milliseconds from 100 to 600000')
    .default(fallback);

export const ConfigSchema = z
  .object({
    PORT: z.coerce
      .number({ error: 'must be a whole number from 0 to 65535' })
      .int('must be a whole number from 0 to 65535')
      .min(0, 'must be a whole number from 0 to 65535')
      .max(65535, 'must be a whole number from 0 to 65535')
      .default(3000),
    HOST: z.string().min(1, 'must not be empty').default('127.0.0.1'),
    DATABASE_PATH: z.string().min(1, 'must not be empty').default('data/lead-gateway.db'),
    RULES_DIR: z.string().min(1, 'must not be empty').default('rules'),
    ADMIN_TOKEN: z
      .string()
      .min(ADMIN_TOKEN_MIN_LENGTH, `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (${GENERATE_TOKEN})`)
      .refine(isVaried, `must not repeat a few characters (${GENERATE_TOKEN})`)
      .optional(),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
    DEMO_MODE: booleanFromEnv.default(false),
    LEGACY_UPSTREAM_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://crm.example.com' })
      .optional()
      .meta({ description: 'Old API to forward legacy reads and actions to; unset: served from the gateway' }),
    UPSTREAM_CONNECT_TIMEOUT_MS: z.coerce.number({ error: 'must be a number of milliseconds' }).int().min(1).max(60_000).default(2_000),
    UPSTREAM_TIMEOUT_MS: z.coerce.number({ error: 'must be a number of milliseconds' }).int().min(1).max(300_000).default(15_000),
    RATE_LIMIT_PER_MINUTE: z.coerce.number({ error: 'must be a whole number' }).int().min(1).max(1_000_000).default(600),
    AUTH_FAILURES_PER_MINUTE: z.coerce.number({ error: 'must be a whole number' }).int().min(1).max(1_000_000).default(30),
    // FULL is the only setting under which a 2xx survives a power loss (docs/operations.md).
    SQLITE_SYNCHRONOUS: z
      .enum(['FULL', 'NORMAL', 'OFF'], { error: 'must be FULL, NORMAL or OFF' })
      .default('FULL'),
    READY_MIN_FREE_MB: z.coerce
      .number({ error: 'must be a whole number of MiB' })
      .int('must be a whole number of MiB')
      .min(0, 'must be 0 or more')
      .default(64)
      .meta({ description: '/readyz reports not ready when the database disk has less free space than this' }),
    // on: every response body is checked against its schema (tests and development; costs ~20% under load).
    RESPONSE_CHECKS: z.enum(['on', 'off'], { error: 'must be on or off' }).default('off'),
    // The client's side of a connection: how long it may take to send a request, how long an idle
    // keep-alive connection is kept, how many connections are held at once (docs/operations.md).
    HEADERS_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.headersTimeoutMs),
    REQUEST_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.requestTimeoutMs),
    KEEP_ALIVE_TIMEOUT_MS: milliseconds(CONNECTION_DEFAULTS.keepAliveTimeoutMs),
    MAX_CONNECTIONS: z.coerce
      .number({ error: 'must be a whole number from 1 to 1000000' })
      .int('must be a whole number from 1 to 1000000')
      .min(1, 'must be a whole number from 1 to 1000000')
      .max(1_000_000, 'must be a whole number from 1 to 1000000')
      .default(CONNECTION_DEFAULTS.maxConnections),
  })
  .superRefine((env, ctx) => {
    if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['HEADERS_TIMEOUT_MS'], message: 'must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)' });
    }
    if (!env.DEMO_MODE && env.ADMIN_TOKEN === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: 'is required outside demo mode (set ADMIN_TOKEN, or start with --demo / DEMO_MODE=true)',
      });
    }
    if (!env.DEMO_MODE && env.ADMIN_TOKEN === DEMO_ADMIN_TOKEN) {
      ctx.addIssue({ code: 'custom', path: ['ADMIN_TOKEN'], message: `is the published demo token; outside demo mode set a token of your own (${GENERATE_TOKEN})` });
    }
  });

/** The admin token in demo mode when none is configured; printed at start. Never valid outside demo mode. */
export const DEMO_ADMIN_TOKEN = 'lgadm_demo-admin-token-not-for-production';

export type ConfigInput = z.input<typeof ConfigSchema>;

export interface Config {
  port: number;
  host: string;
  databasePath: string;
  rulesDir: string;
  adminToken: string | undefined;
  logLevel: z.infer<typeof ConfigSchema>['LOG_LEVEL'];
  demo: boolean;
  sqliteSynchronous: z.infer<typeof ConfigSchema>['SQLITE_SYNCHRONOUS'];
  upstream: UpstreamConfig | null;
  /** Requests per minute per integration (all its keys), unless the integration's rules say otherwise. */
  rateLimitPerMinute: number;
  /** Failed authentications per minute per client address before its requests get 429. */
  authFailuresPerMinute: number;
  /** Check every response body against its schema (serializer.ts). */
  checkResponses: boolean;
  /** Free bytes the database disk must keep for /readyz to say ready. */
  readyMinFreeBytes: number;
  connections: ConnectionLimits;
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

/** Parses environment-style variables; throws a ConfigError that lists every bad value. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const picked = Object.fromEntries(
    Object.keys(ConfigSchema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = ConfigSchema.safeParse(picked);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'} ${issue.message}`),
    );
  }
  const c = result.data;
  return {
    port: c.PORT,
    host: c.HOST,
    databasePath: c.DATABASE_PATH,
    rulesDir: c.RULES_DIR,
    adminToken: c.ADMIN_TOKEN ?? (c.DEMO_MODE ? DEMO_ADMIN_TOKEN : undefined),
    logLevel: c.LOG_LEVEL,
    demo: c.DEMO_MODE,
    sqliteSynchronous: c.SQLITE_SYNCHRONOUS,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: c.AUTH_FAILURES_PER_MINUTE,
    checkResponses: c.RESPONSE_CHECKS === 'on',
    readyMinFreeBytes: c.READY_MIN_FREE_MB * 1024 * 1024,
    connections: {
      headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: c.MAX_CONNECTIONS,
    },
    upstream:
      c.LEGACY_UPSTREAM_URL === undefined
        ? null
        : { url: c.LEGACY_UPSTREAM_URL, connectTimeoutMs: c.UPSTREAM_CONNECT_TIMEOUT_MS, timeoutMs: c.UPSTREAM_TIMEOUT_MS },
  };
}
