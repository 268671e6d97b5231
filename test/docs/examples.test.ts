// Every command of the README and docs/*.md runs against a real gateway, or is listed here with the
// reason it cannot run in a test: a new command in the docs that is neither fails this test.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { builtCli, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { DOC_FILES, ROOT, commandsOf, differences, type DocCommand } from './doc-commands.js';
import { execOwned } from '../support/owned.js';

const run = execOwned;

/** Commands shown in the docs that a test cannot run, by their text as bash reads it. */
const NOT_RUN: Record<string, string> = {
  'npm install': 'installs the dependencies this test already runs on',
  'npm ci && npm run build': 'CI runs exactly these steps (.ci/run)',
  'npm start':
    'starts a gateway in demo mode, as this test does (spawnGateway); test/docs/npm-start.test.ts runs npm start itself',
  'npm test': 'runs this test among the others',
  'read -rs PW && printf \'%s\\n\' "$PW" | npm run cli -- users add aziza --service-team':
    'waits for a password typed at a terminal; test/cli/users.test.ts gives the same command its password on stdin',
  'npm run dev': 'a watch mode that never ends',
  'npm run typecheck': 'CI runs it (.ci/run)',
  'npm run lint': 'CI runs it (.ci/run)',
  'npm run format': 'rewrites the working tree; CI checks its result through npm run lint (.ci/run)',
  'npm run build': 'CI runs it (.ci/run); npm-start.test.ts builds through npm start',
  'npm run bench': 'minutes of load on the whole machine',
  'npm run bench:scaling': 'minutes of load on the whole machine, and a PostgreSQL cluster of its own',
  'npm run test:resilience': 'CI runs it (.ci/run); minutes long',
  'npm run test:postgres': 'CI runs it (.ci/run); minutes long',
  'npm run test:all': 'CI runs its three parts (.ci/run); minutes long',
  'bash .ci/run': 'CI itself',
  'npm run lint:openapi': 'CI runs it (.ci/run)',
  'npm run client:types': 'test/openapi.test.ts runs the script and compiles the docs recipe against what it writes',
  'npm run client:types -- --from http://127.0.0.1:3000/openapi.json --out src/lead-gateway.d.ts':
    'writes into a client project; test/openapi.test.ts runs the same script',
  'ADMIN_TOKEN=$(openssl rand -base64 32) DATABASE_PATH=/var/lib/lead-gateway/gateway.db npm run serve':
    'a production start on a system path; test/process/*.test.ts start the gateway outside demo mode',
  'docker build -t lead-gateway .': 'no Docker engine here; test/artefacts.test.ts checks the Dockerfile against CI',
  'docker run -p 3000:3000 -v lg-data:/data -v "$PWD/rules:/app/rules:ro"    -v "$PWD/admin_token:/run/secrets/admin_token:ro" -e ADMIN_TOKEN_FILE=/run/secrets/admin_token lead-gateway':
    'no Docker engine here; test/config.test.ts reads ADMIN_TOKEN_FILE',
  'openssl rand -base64 32 > admin_token && chmod 0444 admin_token':
    'writes a secret into the working folder for the docker run beside it',
  'useradd --system --home-dir /var/lib/lead-gateway --shell /usr/sbin/nologin lead-gateway':
    'adds a system user (root); test/artefacts.test.ts checks the unit that runs as it',
  'install -d -m 0750 /etc/lead-gateway': 'writes under /etc (root)',
  'openssl rand -base64 32 > /etc/lead-gateway/admin_token && chmod 0600 /etc/lead-gateway/admin_token':
    'writes under /etc (root)',
  "printf 'DATABASE_PATH=/var/lib/lead-gateway/gateway.db\\nRULES_DIR=/etc/lead-gateway/rules\\nHOST=127.0.0.1\\n' > /etc/lead-gateway/lead-gateway.env":
    'writes under /etc (root)',
  'cp deploy/lead-gateway.service /etc/systemd/system/ && systemctl daemon-reload':
    "installs a unit in the host's systemd (root); test/artefacts.test.ts verifies it with systemd-analyze",
  'systemctl enable --now lead-gateway': 'starts a system service (root, a running systemd)',
  'systemctl reload lead-gateway':
    'needs the service running under systemd; test/docs/npm-start.test.ts shows SIGHUP reloading the rules',
  'kill -HUP "$(pgrep -f \'^node dist/main.js\')"':
    'signals every gateway on the host; test/docs/npm-start.test.ts sends SIGHUP to the one npm start runs',
  'pg_dump -Fc -d "$DATABASE_URL" -f "/backups/gateway-$(date +%F).dump"':
    'needs a PostgreSQL server; test/docs/postgres-backup.test.ts runs it on a throwaway cluster while a gateway writes',
  'createdb -h db.internal -U postgres -O gateway gateway_restored':
    'needs a PostgreSQL server; test/docs/postgres-backup.test.ts runs it on a throwaway cluster',
  'pg_restore -d postgres://gateway@db.internal:5432/gateway_restored --no-owner --exit-on-error --single-transaction /backups/gateway-2026-11-22.dump':
    'needs a PostgreSQL server; test/docs/postgres-backup.test.ts runs it on a throwaway cluster and starts a gateway on the result',
  'DATABASE_URL=postgres://gateway@db.internal:5432/gateway npm run cli -- copy --from /var/lib/lead-gateway/gateway.db':
    'needs a PostgreSQL server and a stopped gateway; test/cli/copy.test.ts runs copy on a throwaway cluster and starts a gateway on the result',
  'pg_basebackup -h db.internal -U replicator -D /backups/base/2026-11-22 -Fp -Xs -c fast':
    'needs a server with WAL archiving and a replication role, then a server restart to recover; run by hand on a throwaway cluster (docs/operations/backup.md says what it showed)',
};

/** The operations pages in the order docs/operations.md lists them. */
const OPERATIONS = [
  'deployment',
  'configuration',
  'upgrades',
  'postgresql',
  'backup',
  'monitoring',
  'retention',
  'rate-limits',
  'limits',
  'admin-access',
  'webhooks',
  'porting-guide',
].map((page) => `docs/operations/${page}.md`);
/** Files in reading order; the runbook shows each step both ways, so each way runs on its own gateway. */
const READING_ORDER = [
  'README.md',
  'docs/contributing.md',
  'docs/api.md',
  'docs/migration.md',
  'docs/console.md',
  'docs/legacy-api.md',
  'docs/rules.md',
  'docs/webhooks.md',
  'docs/operations.md',
  ...OPERATIONS,
  'docs/performance.md',
  'docs/scaling.md',
  'docs/reliability.md',
  'docs/architecture.md',
  'docs/testing.md',
];
const RUNBOOK = 'docs/runbook.md';
const DEMO_HOST = 'http://127.0.0.1:3000';

/**
 * Diverts `npm run cli --` to the CLI on the test database (the run's build of it, as `dist/` holds
 * it: the same program as `tsx src/cli/main.ts`, started at half the CPU; test/process/version-help
 * runs `npm run cli` itself) and `npx` to the project's own bins; the real curl runs.
 */
const PREAMBLE = `
curl() { command curl --write-out '%{stderr}\\n@@http-status %{http_code}\\n' "$@"; }
npm() {
  if [ "$1" = run ] && [ "$2" = cli ] && [ "$3" = -- ]; then shift 3; node "$LG_CLI" "$@"
  else echo "npm $* is not run by the docs test" >&2; return 99; fi
}
npx() { local bin="$1"; shift; "$LG_ROOT/node_modules/.bin/$bin" "$@"; }
`;

interface Environment {
  gateway: ChildGateway;
  env: Record<string, string>;
  cwd: string;
}

const field = (text: string, name: string) => new RegExp(`${name}:\\s+(\\S+)`).exec(text)?.[1] ?? '';
const started: Environment[] = [];

/** A demo-mode gateway on a fresh database, with the keys its banner prints. */
async function demoGateway(): Promise<Environment> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-docs-'));
  const database = join(dir, 'demo.db');
  const gateway = await spawnGateway({
    env: { DEMO_MODE: 'true', ADMIN_TOKEN: '', DATABASE_PATH: database },
    capture: true,
  });
  for (let i = 0; i < 100 && !/admin token:/.test(gateway.output()); i++) await new Promise((r) => setTimeout(r, 50));
  const banner = gateway.output();
  const environment = {
    gateway,
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? dir,
      LG_ROOT: ROOT,
      LG_CLI: builtCli(),
      GATEWAY: gateway.address,
      ADMIN_TOKEN: field(banner, 'admin token'),
      KEY: field(banner, 'v1 key'),
      OLD_BOT_KEY: `lgbot_docs-${randomBytes(12).toString('hex')}`,
      DATABASE_PATH: database,
      RULES_DIR: join(ROOT, 'rules'),
    },
  };
  started.push(environment);
  return environment;
}

afterAll(async () => {
  for (const { gateway, cwd } of started) {
    await gateway.stop();
    rmSync(cwd, { recursive: true, force: true });
  }
});

const where = (c: DocCommand) => `${c.file}:${c.line}: ${c.text.slice(0, 100)}`;

/** Runs one command as bash would, on the test gateway; checks its exit, status and shown answer. */
async function check(command: DocCommand, { gateway, env, cwd }: Environment, expect: ExpectStatic): Promise<void> {
  const text = command.text.replaceAll(DEMO_HOST, gateway.address);
  const result = await run('bash', ['-c', `${PREAMBLE}\n${text}`], {
    env,
    cwd,
    timeout: 15_000,
    maxBuffer: 16 << 20,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: e.code ?? -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
  const context = `${where(command)}\nstdout: ${result.stdout.slice(0, 600)}\nstderr: ${result.stderr.slice(0, 600)}`;
  expect(result.code, context).toBe(0);
  if (command.kind !== 'curl') return;
  const status = Number(/@@http-status (\d{3})/.exec(result.stderr)?.[1] ?? 0);
  if (command.expectedStatus !== null) expect(status, context).toBe(command.expectedStatus);
  else
    expect(
      status >= 200 && status < 400,
      `${context}\nstatus ${status}: a doc example that fails must say so with "# answers NNN"`,
    ).toBe(true);
  if (command.expectedBody !== null)
    expect(differences(JSON.parse(result.stdout), command.expectedBody), context).toEqual([]);
}

async function runAll(commands: DocCommand[], environment: Environment, expect: ExpectStatic): Promise<void> {
  for (const command of commands) await check(command, environment, expect);
}

/** The curl the demo banner ends with, as a newcomer copies it (continuation lines joined). */
function bannerCurl({ gateway }: Environment): DocCommand {
  const lines = gateway.output().split('\n');
  const start = lines.findIndex((l) => l.startsWith('  curl '));
  if (start < 0) throw new Error(`no curl in the demo banner:\n${gateway.output()}`);
  let end = start;
  while (lines[end]?.trimEnd().endsWith('\\')) end++;
  const text = lines
    .slice(start, end + 1)
    .map((l) => l.trim().replace(/\\$/, ''))
    .join(' ');
  return {
    file: 'the demo banner',
    line: 0,
    text,
    kind: 'curl',
    expectedStatus: 201,
    expectedBody: { intake_outcome: 'created' },
  };
}

/** The markdown section under a heading, up to the next heading of any level. */
const section = (file: string, heading: string) => {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const start = text.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`${file}: no heading ${heading}`);
  const rest = text.slice(start + heading.length + 1);
  return rest.slice(0, rest.search(/^#{1,6} /m) >>> 0);
};

const all = DOC_FILES.flatMap(commandsOf);
const runnable = (c: DocCommand) => c.kind !== 'other';

describe('the commands in the docs', () => {
  it('are each run below, or listed with the reason they cannot run in a test', () => {
    expect([...READING_ORDER, RUNBOOK].sort()).toEqual([...DOC_FILES].sort());
    const unlisted = all.filter((c) => !runnable(c) && !(c.text in NOT_RUN)).map(where);
    expect(unlisted, 'run it in this test, or list it in NOT_RUN with the reason').toEqual([]);
    const stale = Object.keys(NOT_RUN).filter((text) => !all.some((c) => c.text === text));
    expect(stale, 'no longer in the docs: drop it from NOT_RUN').toEqual([]);
  });

  // The three gateways work at once: the files' commands are sequences, the files are not.
  // A newcomer runs the banner's curl first, as it invites, then the README's: each answers as the README says.
  it.concurrent(
    "run in reading order on one demo gateway after the banner's own curl: every example its own event_id, each answering as shown",
    { timeout: 180_000 },
    async ({ expect }) => {
      const environment = await demoGateway();
      const commands = READING_ORDER.flatMap(commandsOf).filter(runnable);
      expect(commands.length).toBeGreaterThan(10);
      await check(bannerCurl(environment), environment, expect);
      await runAll(commands, environment, expect);
      // "sending exactly the same body again answers 200 with "replayed": true"
      const first = commandsOf('README.md').find(
        (c) => c.kind === 'curl' && c.text.includes('/api/integrations/v1/leads/'),
      );
      expect(first?.expectedStatus).toBe(201);
      await check(
        { ...first!, expectedStatus: 200, expectedBody: { replayed: true, intake_outcome: 'created' } },
        environment,
        expect,
      );
    },
  );

  it.concurrent(
    "of api.md's error table about a missing body answer as the table says",
    { timeout: 60_000 },
    async ({ expect }) => {
      const table = section('docs/api.md', '## Errors');
      const row = (status: number, code: string) =>
        new RegExp(`^\\| ${status} \\| \`${code}\` \\| (.*) \\|$`, 'm').exec(table)?.[1] ?? '';
      expect(row(400, 'malformed-json')).toMatch(/empty while `Content-Type` says `application\/json`/);
      expect(row(415, 'unsupported-media-type')).toMatch(/another `Content-Type`.*no body and no `Content-Type`/);
      const { gateway, env } = await demoGateway();
      const post = (headers: Record<string, string>, body?: string) =>
        fetch(`${gateway.address}/api/integrations/v1/leads/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${env.KEY}`, ...headers },
          ...(body === undefined ? {} : { body }),
        });
      const problem = async (res: Response) => ({
        status: res.status,
        code: ((await res.json()) as { code: string }).code,
      });
      expect(await problem(await post({ 'content-type': 'application/json' }, ''))).toEqual({
        status: 400,
        code: 'malformed-json',
      });
      expect(await problem(await post({ 'content-type': 'text/plain' }, 'event_id=x'))).toEqual({
        status: 415,
        code: 'unsupported-media-type',
      });
      expect(await problem(await post({}))).toEqual({ status: 415, code: 'unsupported-media-type' });
    },
  );

  it.concurrent(
    'of the runbook run in order through the CLI, and through the admin API, each on its own gateway',
    { timeout: 180_000 },
    async ({ expect }) => {
      const runbook = commandsOf(RUNBOOK);
      expect(runbook.filter((c) => !runnable(c)).map(where)).toEqual([]);
      const [cli, api] = await Promise.all([demoGateway(), demoGateway()]);
      await Promise.all([
        runAll(
          runbook.filter((c) => c.kind === 'cli'),
          cli,
          expect,
        ),
        runAll(
          runbook.filter((c) => c.kind === 'curl'),
          api,
          expect,
        ),
      ]);
      // What the runbook says the report shows: members of the admin API's report, columns of the CLI's table.
      const said =
        /The report shows legacy calls per route[\s\S]*?v1 calls likewise/.exec(
          section(RUNBOOK, '## 2. Watch who still calls the old interface'),
        )?.[0] ?? '';
      const quoted = [...said.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const members = quoted.filter((q) => /^[a-z]+(_[a-z0-9]+)+$/.test(q));
      const columns = quoted.filter((q) => /^[A-Z0-9 ]+$/.test(q));
      expect(members).toEqual(expect.arrayContaining(['successful_7d', 'last_success']));
      expect(columns.length).toBeGreaterThan(0);
      // On a gateway of its own that a v1 lead was sent to, so the table has a row.
      const counted = await demoGateway();
      await check(bannerCurl(counted), counted, expect);
      await fetch(`${counted.gateway.address}/admin/v1/integrations/brightpath:telegram-bot/report`, {
        headers: { authorization: `Bearer ${counted.env.ADMIN_TOKEN}` },
      }); // writes the counters now
      const report = await run('bash', ['-c', `${PREAMBLE}\nnpm run cli -- report brightpath:telegram-bot`], {
        env: counted.env,
        cwd: counted.cwd,
        timeout: 15_000,
      });
      const header = report.stdout.split('\n').find((l) => l.startsWith('API ')) ?? '';
      for (const column of columns) expect(header, `the CLI's report table has the column ${column}`).toContain(column);
      const json = await (
        await fetch(`${api.gateway.address}/admin/v1/integrations/brightpath:telegram-bot/report`, {
          headers: { authorization: `Bearer ${api.env.ADMIN_TOKEN}` },
        })
      ).json();
      for (const member of members) expect(JSON.stringify(json), `the report has ${member}`).toContain(`"${member}":`);
    },
  );
});
