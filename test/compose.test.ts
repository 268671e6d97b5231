// The compose example cannot run here (no container engine): its settings are checked against the
// gateway's configuration instead, so a renamed variable or a mismatched port fails the tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigSchema, parseConfig } from '../src/config.js';
import { SHARED_LIMITS_POOL_SIZE } from '../src/rate-limit/shared-limiter.js';

const ROOT = join(import.meta.dirname, '..');
const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
  services: Record<string, { environment?: Record<string, string>; env_file?: string; deploy?: { replicas?: number }; command?: string[]; networks?: { default?: { ipv4_address?: string } }; volumes?: string[] }>;
  networks: { default: { ipam: { config: { subnet: string }[] } } };
};
const nginx = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
const gateway = compose.services.gateway!;
const envFile = parseEnv(readFileSync(join(ROOT, `${gateway.env_file!}.example`), 'utf8'));
const known = new Set(Object.keys(ConfigSchema.shape));

describe('compose.yaml', () => {
  it('names only variables the gateway reads, and together they make a valid PostgreSQL configuration', () => {
    const env = { ...envFile, ...gateway.environment };
    expect(Object.keys(env).filter((name) => !known.has(name))).toEqual([]);
    const config = parseConfig({ ...env, ADMIN_TOKEN: 'an-operator-token-of-32-characters-x' });
    expect(config.databaseUrl).not.toBeNull();
    const url = new URL(config.databaseUrl!);
    const pg = compose.services.postgres!.environment!;
    expect([url.hostname, url.username, url.pathname.slice(1)]).toEqual(['postgres', pg.POSTGRES_USER, pg.POSTGRES_DB]);
  });

  it('runs several replicas that fit the database connections, behind nginx on the gateway port', () => {
    const config = parseConfig({ ...envFile, ...gateway.environment, ADMIN_TOKEN: 'an-operator-token-of-32-characters-x' });
    const replicas = gateway.deploy!.replicas!;
    expect(replicas).toBeGreaterThanOrEqual(2);
    const maxConnections = Number(/max_connections=(\d+)/.exec(compose.services.postgres!.command!.join(' '))![1]);
    // Each process: its pool, its change feed (1) and its shared rate-limit counters. Three connections
    // stay for superusers (PostgreSQL's reserve), and room for a rolling upgrade's extra replica and psql.
    expect((replicas + 1) * (config.databasePoolSize + 1 + SHARED_LIMITS_POOL_SIZE)).toBeLessThanOrEqual(maxConnections - 3 - 10);
    expect(nginx).toMatch(new RegExp(`server gateway:${config.port} resolve;`));
  });

  it('trusts X-Forwarded-For from nginx alone', () => {
    const config = parseConfig({ ...envFile, ...gateway.environment, ADMIN_TOKEN: 'an-operator-token-of-32-characters-x' });
    const nginxAddress = compose.services.nginx!.networks!.default!.ipv4_address!;
    expect(config.trustProxy).toEqual([nginxAddress]);
    expect(nginxAddress.startsWith(compose.networks.default.ipam.config[0]!.subnet.replace(/0\/24$/, ''))).toBe(true);
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
  });
});
