// Artefacts that CI cannot run: the Dockerfile keeps CI's build, and ships what the server reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';

const ROOT = join(import.meta.dirname, '..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');

describe('Dockerfile', () => {
  it('builds with the same steps as CI', () => {
    for (const step of ['npm ci', 'npm run build']) {
      expect(ci).toContain(step);
      expect(dockerfile).toMatch(new RegExp(`RUN .*${step}`));
    }
  });

  it('ships the files the server reads at run time, runs as non-root, with a volume and a health check', () => {
    for (const dir of ['dist', 'node_modules', 'rules', 'docs']) expect(dockerfile).toMatch(new RegExp(`COPY .*\\b${dir}\\b`));
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/main\.js"\]$/m);
  });

  it('keeps SQLite on the /data volume by default, and takes a DATABASE_URL given beside its environment', () => {
    const line = /^ENV (.+)$/m.exec(dockerfile)![1]!;
    const env = Object.fromEntries(line.split(' ').map((pair) => pair.split('=') as [string, string]));
    const token = 'an-operator-token-of-32-characters-x';
    const sqlite = parseConfig({ ...env, ADMIN_TOKEN: token });
    // WORKDIR /app and the link /app/data -> /data put the default file on the volume.
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toMatch(/ln -s \/data \/app\/data/);
    expect(sqlite).toMatchObject({ databaseUrl: null, databasePath: 'data/lead-gateway.db' });
    expect(parseConfig({ ...env, ADMIN_TOKEN: token, DATABASE_URL: 'postgres://gateway@db:5432/gateway' }).databaseUrl).toBe('postgres://gateway@db:5432/gateway');
  });
});
