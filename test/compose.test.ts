// The compose example cannot run here (no image can be pulled): its settings are checked against the
// gateway's configuration instead, so a renamed variable, a secret in plain sight, a mismatched port or
// a PostgreSQL other than the tests' fails the tests.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigSchema, SECRET_FILE_VARIABLES, parseConfig } from '../src/config.js';
import { SHARED_LIMITS_POOL_SIZE } from '../src/rate-limit/shared-limiter.js';
import { postgresBinaries } from './support/postgres.js';

interface Service {
  image?: string;
  environment?: Record<string, string>;
  env_file?: string;
  secrets?: string[];
  deploy?: { replicas?: number };
  command?: string[];
  networks?: { default?: { ipv4_address?: string } };
  volumes?: string[];
}
const ROOT = join(import.meta.dirname, '..');
const composeText = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
const compose = parse(composeText) as {
  services: Record<string, Service>;
  networks: { default: { ipam: { config: { subnet: string }[] } } };
  secrets: Record<string, { file: string }>;
  volumes?: Record<string, unknown>;
};
const nginx = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
const gateway = compose.services.gateway!;
const known = new Set([...Object.keys(ConfigSchema.shape), ...SECRET_FILE_VARIABLES.map((name) => `${name}_FILE`)]);

// The secret files as the comment at the top of compose.yaml makes them, in a folder of the test's own.
const secretsDir = mkdtempSync(join(tmpdir(), 'lead-gateway-compose-'));
afterAll(() => rmSync(secretsDir, { recursive: true, force: true }));
const urlTemplate = /printf '(postgres:\/\/[^']+)' "\$PW" > deploy\/database_url/.exec(composeText)?.[1];
const password = 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6';
const made: Record<string, string> = {
  postgres_password: password,
  database_url: (urlTemplate ?? '').replace('%s', password),
  admin_token: 'an-operator-token-of-32-characters-x\n',
  console_secret: 'a-console-secret-of-32-characters-xyz\n',
};
/** The gateway's environment with each /run/secrets/<name> read from the test's copy of that file. */
function gatewayEnv(): Record<string, string> {
  const env = { ...gateway.environment };
  for (const [name, value] of Object.entries(env)) {
    const secret = /^\/run\/secrets\/(.+)$/.exec(value)?.[1];
    if (secret === undefined) continue;
    const path = join(secretsDir, secret);
    writeFileSync(path, made[secret] ?? '');
    env[name] = path;
  }
  return env;
}

describe('compose.yaml', () => {
  it('names only variables the gateway reads, and together with its secret files they make a valid PostgreSQL configuration', () => {
    expect(Object.keys(gateway.environment!).filter((name) => !known.has(name))).toEqual([]);
    expect(urlTemplate).toBeDefined();
    const config = parseConfig(gatewayEnv());
    expect(config.databaseUrl).not.toBeNull();
    const url = new URL(config.databaseUrl!);
    const pg = compose.services.postgres!.environment!;
    expect([url.hostname, url.username, url.password, url.pathname.slice(1)]).toEqual([
      'postgres',
      pg.POSTGRES_USER,
      password,
      pg.POSTGRES_DB,
    ]);
    expect(config.adminToken).toBe('an-operator-token-of-32-characters-x');
    expect(config.console?.secret).toBe('a-console-secret-of-32-characters-xyz');
  });

  it('keeps no secret in a plain variable: each comes from a file under /run/secrets that compose mounts', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.env_file, `${name} reads an env file`).toBeUndefined();
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        if (/(TOKEN|SECRET|PASSWORD|DATABASE_URL)$/.test(variable))
          expect.fail(`${name}: ${variable} is set in plain text; use ${variable}_FILE`);
        expect(value, `${name}: ${variable}`).not.toMatch(/:\/\/[^/@]*:[^/@]*@/);
        const secret = /^\/run\/secrets\/(.+)$/.exec(value)?.[1];
        if (secret !== undefined) {
          expect(service.secrets, `${name} mounts ${secret}`).toContain(secret);
          expect(compose.secrets[secret]?.file).toBe(`deploy/${secret}`);
        }
      }
    }
    const gatewaySecrets = Object.entries(gateway.environment!).filter(([variable]) => variable.endsWith('_FILE'));
    expect(gatewaySecrets.map(([variable]) => variable).sort()).toEqual(
      SECRET_FILE_VARIABLES.map((name) => `${name}_FILE`).sort(),
    );
    // Every file the secrets name stays out of version control.
    const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n');
    for (const { file } of Object.values(compose.secrets)) expect(ignored).toContain(file);
  });

  it('declares only volumes a service mounts', () => {
    const mounted = Object.values(compose.services).flatMap((s) => (s.volumes ?? []).map((v) => v.split(':')[0]!));
    expect(Object.keys(compose.volumes ?? {}).filter((name) => !mounted.includes(name))).toEqual([]);
  });

  it('runs several replicas that fit the database connections, behind nginx on the gateway port', () => {
    const config = parseConfig(gatewayEnv());
    const replicas = gateway.deploy!.replicas!;
    expect(replicas).toBeGreaterThanOrEqual(2);
    const maxConnections = Number(/max_connections=(\d+)/.exec(compose.services.postgres!.command!.join(' '))![1]);
    // Each process: its pool, its change feed (1) and its shared rate-limit counters. Three connections
    // stay for superusers (PostgreSQL's reserve), and room for a rolling upgrade's extra replica and psql.
    expect((replicas + 1) * (config.databasePoolSize + 1 + SHARED_LIMITS_POOL_SIZE)).toBeLessThanOrEqual(
      maxConnections - 3 - 10,
    );
    expect(nginx).toMatch(new RegExp(`server gateway:${config.port} resolve;`));
  });

  it('trusts X-Forwarded-For and X-Forwarded-Proto from nginx alone, and nginx sends both', () => {
    const config = parseConfig(gatewayEnv());
    const nginxAddress = compose.services.nginx!.networks!.default!.ipv4_address!;
    expect(config.trustProxy).toEqual([nginxAddress]);
    expect(nginxAddress.startsWith(compose.networks.default.ipam.config[0]!.subnet.replace(/0\/24$/, ''))).toBe(true);
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
    // The console answers 403 to a request it believes is plain http: the scheme must reach it.
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Proto \$\w+;/);
    const variable = /proxy_set_header X-Forwarded-Proto \$(\w+);/.exec(nginx)![1]!;
    if (variable !== 'scheme')
      expect(nginx).toMatch(new RegExp(`map \\$http_x_forwarded_proto \\$${variable} \\{[^}]*"" \\$scheme;`));
  });

  const bin = postgresBinaries();
  it.skipIf(bin === null)(
    'runs the PostgreSQL major version the tests run against (skipped without a local initdb)',
    () => {
      const initdb = spawnSync(join(bin!, 'initdb'), ['--version'], { encoding: 'utf8' }).stdout;
      const testsMajor = /\(PostgreSQL\) (\d+)/.exec(initdb)?.[1];
      expect(testsMajor).toBeDefined();
      expect(compose.services.postgres!.image).toMatch(new RegExp(`^postgres:${testsMajor}(\\.\\d+)*-`));
    },
  );
});
