// Artefacts that CI cannot run: the Dockerfile keeps CI's build, and ships what the server reads; the
// systemd unit is verified by systemd-analyze where it exists, and its directives are checked anyway.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRET_FILE_VARIABLES, parseConfig } from '../src/config.js';

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

  it('ships the files the server reads at run time, runs as non-root, with a health check', () => {
    for (const dir of ['dist', 'node_modules', 'rules', 'docs'])
      expect(dockerfile).toMatch(new RegExp(`COPY .*\\b${dir}\\b`));
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/main\.js"\]$/m);
    // An image VOLUME gives every container an anonymous volume, unused on PostgreSQL: SQLite users mount one.
    expect(dockerfile).not.toMatch(/^VOLUME/m);
  });

  it('pins its base images to a Node.js release and ships the production dependencies alone', () => {
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    const stages = new Set([...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]!));
    const images = bases.filter((image) => !stages.has(image));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
    // The last stage, the image, copies node_modules from the stage that installed without devDependencies.
    const from = /^COPY --from=(\S+) \/app\/node_modules/m.exec(dockerfile)![1]!;
    const stage = dockerfile.slice(dockerfile.indexOf(`AS ${from}`)).split(/^FROM /m)[0]!;
    expect(stage).toMatch(/^RUN npm ci --omit=dev\b/m);
  });

  it('holds no secret in ENV or ARG: the admin token, console secret and database URL come at run time', () => {
    const set = [...dockerfile.matchAll(/^(?:ENV|ARG) (.+)$/gm)].flatMap((m) =>
      m[1]!.split(' ').map((pair) => pair.split('=')[0]!),
    );
    expect(set.length).toBeGreaterThan(0);
    for (const name of set) expect(name).not.toMatch(/TOKEN|SECRET|PASSWORD|DATABASE_URL|KEY/);
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
    expect(
      parseConfig({ ...env, ADMIN_TOKEN: token, DATABASE_URL: 'postgres://gateway@db:5432/gateway' }).databaseUrl,
    ).toBe('postgres://gateway@db:5432/gateway');
  });
});

describe('deploy/lead-gateway.service', () => {
  const unit = readFileSync(join(ROOT, 'deploy', 'lead-gateway.service'), 'utf8');
  /** `[Section] Key=value` lines as section -> key -> values (a key may repeat). */
  const sections = new Map<string, Map<string, string[]>>();
  let section = '';
  for (const line of unit.split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) sections.set((section = header[1]!), new Map());
    const directive = /^(\w+)=(.*)$/.exec(line);
    if (directive && section) {
      const keys = sections.get(section)!;
      keys.set(directive[1]!, [...(keys.get(directive[1]!) ?? []), directive[2]!]);
    }
  }
  const service = sections.get('Service') ?? new Map<string, string[]>();
  const one = (key: string) => service.get(key)?.[0];

  it('runs node dist/main.js as a dedicated user, reloads on SIGHUP, restarts on failure, settings from a file', () => {
    expect(one('User')).toBe('lead-gateway');
    expect(one('Group')).toBe('lead-gateway');
    expect(one('ExecStart')).toMatch(/^\/usr\/bin\/node dist\/main\.js$/);
    expect(one('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(one('Restart')).toBe('on-failure');
    expect(one('EnvironmentFile')).toBe('/etc/lead-gateway/lead-gateway.env');
    expect(sections.get('Install')?.get('WantedBy')).toEqual(['multi-user.target']);
  });

  it('hands the secrets over as credentials read through the *_FILE variables, never in the environment', () => {
    const credentials = (service.get('LoadCredential') ?? []).map((c) => c.split(':')[0]!);
    expect(credentials).toContain('admin_token');
    const environment = (service.get('Environment') ?? []).map((e) => e.split('=') as [string, string]);
    for (const [name, value] of environment) {
      expect(name).not.toMatch(/^(ADMIN_TOKEN|CONSOLE_SECRET|DATABASE_URL)$/);
      const file = /^%d\/(\w+)$/.exec(value)?.[1];
      if (name.endsWith('_FILE')) {
        expect(SECRET_FILE_VARIABLES.map((v) => `${v}_FILE`)).toContain(name);
        expect(credentials).toContain(file);
      }
    }
    expect(environment.map(([name]) => name)).toContain('ADMIN_TOKEN_FILE');
  });

  it('is hardened: no new privileges, a read-only system but for its database folder', () => {
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('ProtectHome')).toBe('yes');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('StateDirectory')).toBe('lead-gateway');
    expect(one('ReadWritePaths')).toBe('/var/lib/lead-gateway');
    expect(one('CapabilityBoundingSet')).toBe('');
    // V8 writes the code it runs: this protection would kill the process at its first JIT compile.
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it.skipIf(!analyze)(
    'passes systemd-analyze verify without a warning (skipped where systemd-analyze is missing)',
    () => {
      // The unit as installed, with this machine's node in place of /usr/bin/node (verify checks that it exists).
      const path = join(dir, 'lead-gateway.service');
      const verify = () => spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8', timeout: 30_000 });
      writeFileSync(path, unit.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
      const result = verify();
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      // The check can fail: a directive systemd does not know is reported.
      writeFileSync(path, unit.replace('NoNewPrivileges=yes', 'NoNewPrivileges=yes\nNoNewPrivilege=yes'));
      expect(verify().stderr).toMatch(/Unknown key 'NoNewPrivilege'/);
    },
  );
});
