// Three gateway processes on one PostgreSQL database, each with its own copy of the rules folder (its
// own disk or ConfigMap): a reload through any one of them is made by all three, each from its own
// folder; the rules each runs, and drift between them, show in the admin API, /readyz and /metrics;
// a replica whose files are broken keeps its rules and is named; one that cannot answer in time is
// named too, and applies the reload once it runs again.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, CHILD_ADMIN_TOKEN, type ChildGateway, ROOT, spawnGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { createRulesHolder } from '../../src/rules/loader.js';

interface Replica {
  gw: ChildGateway;
  rulesDir: string;
  id: string;
}
interface ReplicaView {
  id: string;
  rules_version: string | null;
  this_replica: boolean;
  last_reload_error: { at: string; problems: string[] } | null;
  outcome?: string;
}

let cluster: TestPostgres | null = null;
let databaseUrl = '';
const replicas: Replica[] = [];
const dirs: string[] = [];
beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  databaseUrl = await freshDatabase(cluster.url);
  const env = { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '100000' };
  const start = async () => {
    const rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-replica-rules-'));
    dirs.push(rulesDir);
    cpSync(join(ROOT, 'rules'), rulesDir, { recursive: true });
    const gw = await spawnGateway({ env: { ...env, RULES_DIR: rulesDir }, capture: true });
    return { gw, rulesDir, id: '' };
  };
  // One first, so the others find the schema migrated.
  replicas.push(await start());
  replicas.push(...(await Promise.all([start(), start()])));
  for (const r of replicas) r.id = (await listed(r)).items.find((x) => x.this_replica)!.id;
}, 90_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.gw.stop()));
  await cluster?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const auth = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
const listed = async (r: Replica) =>
  (await (await fetch(`${r.gw.address}/admin/v1/replicas`, { headers: auth })).json()) as {
    items: ReplicaView[];
    rules_versions: string[];
    drift: boolean;
  };
const reloadThrough = async (r: Replica) => {
  const res = await fetch(`${r.gw.address}/admin/v1/rules/reload`, { method: 'POST', headers: auth });
  return {
    status: res.status,
    body: (await res.json()) as {
      replicas: ReplicaView[];
      not_answered: string[];
      rules_versions: string[];
      drift: boolean;
      errors?: { message: string }[];
    },
  };
};
const ready = async (r: Replica) =>
  (await (await fetch(`${r.gw.address}/readyz`)).json()) as { rules_version: string; rules_drift: boolean | null };
const metrics = async (r: Replica) => (await fetch(`${r.gw.address}/metrics`)).text();
/** An edit of one rules file that changes the version and nothing else. */
const edit = (r: Replica, note: string) => appendFileSync(join(r.rulesDir, 'brightpath.yaml'), `\n# ${note}\n`);
const versionOf = (r: Replica) => createRulesHolder(r.rulesDir).version().version;
const warned = (r: Replica) =>
  r.gw
    .output()
    .split('\n')
    .filter((l) => l.includes('"msg":"rules drift: live replicas run different rules')).length;
const byId = (views: ReplicaView[]) => Object.fromEntries(views.map((v) => [v.id, v]));
/** The CLI's `replicas` command, through a replica's admin API or on the database. */
const cliReplicas = (target: Record<string, string>, ...args: string[]) => {
  const run = spawnSync(process.execPath, [builtCli(), ...args, 'replicas'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...target },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
};
const until = async (check: () => Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('rules on three replicas with a folder each', () => {
  it('are listed by every replica with one version and no drift at the start', async (context) => {
    if (!cluster) return context.skip();
    const start = versionOf(replicas[0]!);
    for (const r of replicas) {
      const list = await listed(r);
      expect(list.items.map((x) => x.id)).toEqual(replicas.map((x) => x.id).sort());
      expect(list.items.filter((x) => x.this_replica).map((x) => x.id)).toEqual([r.id]);
      expect(list).toMatchObject({ rules_versions: [start], drift: false });
      expect(await ready(r)).toMatchObject({ rules_version: start, rules_drift: false });
    }
  });

  it('reload on all three when asked through one, each from its own folder', async (context) => {
    if (!cluster) return context.skip();
    for (const r of replicas) edit(r, 'the same edit everywhere');
    const next = versionOf(replicas[0]!);
    const { status, body } = await reloadThrough(replicas[1]!);
    expect(status).toBe(200);
    expect(body.replicas.map((x) => [x.id, x.outcome, x.rules_version])).toEqual(
      replicas.map((r) => [r.id, 'reloaded', next]).sort(),
    );
    expect(body).toMatchObject({ not_answered: [], rules_versions: [next], drift: false });
    for (const r of replicas) {
      expect(await listed(r)).toMatchObject({ rules_versions: [next], drift: false });
      expect(await ready(r)).toMatchObject({ rules_version: next, rules_drift: false });
      expect(await metrics(r)).toContain('lead_gateway_rules_versions_live 1');
      // Part-way through, the replicas differed for a moment: that is not drift.
      expect(r.gw.output()).not.toContain('"msg":"rules drift');
    }
  });

  it('report drift with both versions when one folder differs, in the admin API, /readyz, /metrics and the log (once)', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    edit(c, 'only on the third replica');
    const versions = [versionOf(a), versionOf(c)].sort();
    const { status, body } = await reloadThrough(a);
    expect(status).toBe(200);
    expect(body).toMatchObject({ not_answered: [], rules_versions: versions, drift: true });
    expect(byId(body.replicas)[c.id]).toMatchObject({ outcome: 'reloaded', rules_version: versionOf(c) });
    for (const r of replicas) {
      expect(await listed(r)).toMatchObject({ rules_versions: versions, drift: true });
      // Probes reuse one look at the replicas for a second.
      await until(async () => (await ready(r)).rules_drift === true);
      expect((await ready(r)).rules_version).toBe(versionOf(r));
      await until(async () => (await metrics(r)).includes('lead_gateway_rules_versions_live 2'));
      expect(await metrics(r)).toContain(`lead_gateway_rules_info{version="${versionOf(r)}"} 1`);
    }
    expect(byId((await listed(b)).items)[c.id]!.rules_version).toBe(versionOf(c));
    // The CLI says the same, over the admin API and on the database (leaving its own process out).
    const overApi = cliReplicas({ LEAD_GATEWAY_ADMIN_TOKEN: CHILD_ADMIN_TOKEN }, '--url', b.gw.address);
    expect(overApi.code).toBe(0);
    expect(overApi.out).toContain(`DRIFT: the live replicas run 2 versions of the rules: ${versions.join(', ')}`);
    const onDatabase = cliReplicas({ DATABASE_URL: databaseUrl }, '--json');
    expect(onDatabase.code).toBe(0);
    const json = JSON.parse(onDatabase.out) as { items: ReplicaView[]; rules_versions: string[]; drift: boolean };
    expect(json).toMatchObject({ rules_versions: versions, drift: true });
    expect(json.items.map((x) => [x.id, x.rules_version])).toEqual(replicas.map((r) => [r.id, versionOf(r)]).sort());
    // The replica that asked logs drift at once; another once it has lasted two seconds (a look part-way
    // through a reload is not drift), and only once however often it looks.
    expect(warned(a)).toBe(1);
    expect(a.gw.output()).toContain(`"rules_versions":${JSON.stringify(versions)}`);
    await until(async () => (await ready(b), warned(b) === 1));
    for (let i = 0; i < 3; i++) await listed(b);
    expect([warned(a), warned(b)]).toEqual([1, 1]);
  });

  it('keep the previous rules on a replica whose file is broken, and name it in the reload answer and the list', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const before = versionOf(b);
    writeFileSync(join(b.rulesDir, 'broken.yaml'), 'format_version: 1\nworkspace: [not, a, workspace\n');
    const { status, body } = await reloadThrough(c);
    expect(status).toBe(422);
    const views = byId(body.replicas);
    expect(views[b.id]).toMatchObject({ outcome: 'failed', rules_version: before });
    expect(views[b.id]!.last_reload_error!.problems.join('\n')).toContain(join(b.rulesDir, 'broken.yaml'));
    expect([views[a.id]!.outcome, views[c.id]!.outcome]).toEqual(['reloaded', 'reloaded']);
    expect(body.errors!.every((e) => e.message.startsWith(`${b.id}: `))).toBe(true);
    expect((await ready(b)).rules_version).toBe(before);
    expect(byId((await listed(a)).items)[b.id]!.last_reload_error).not.toBeNull();
    await until(async () => b.gw.output().includes('"msg":"rules reload failed; the previous rules stay in force"'));
    // Mended: the next reload clears the error.
    rmSync(join(b.rulesDir, 'broken.yaml'));
    expect((await reloadThrough(a)).status).toBe(200);
    expect(byId((await listed(c)).items)[b.id]!.last_reload_error).toBeNull();
  });

  it('name a replica that does not answer in time, which reloads once it runs again', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    // The same rules everywhere again; the third replica cannot answer while stopped.
    for (const r of [a, b]) edit(r, 'only on the third replica');
    c.gw.child.kill('SIGSTOP');
    try {
      const { status, body } = await reloadThrough(a);
      expect(status).toBe(200);
      expect(body.not_answered).toEqual([c.id]);
      expect(byId(body.replicas)[c.id]!.outcome).toBe('no-answer');
      expect(body.drift).toBe(false);
      // The line comes through the child's stdout, which may arrive after its HTTP answer: waited for.
      await until(async () =>
        a.gw.output().includes('"msg":"rules drift ended: every live replica runs the same rules"'),
      );
      edit(c, 'changed while stopped');
    } finally {
      c.gw.child.kill('SIGCONT');
    }
    // The request waited in its connection: answered as soon as it runs, from the folder as it is now.
    await until(async () => byId((await listed(a)).items)[c.id]!.rules_version === versionOf(c));
    expect((await ready(c)).rules_version).toBe(versionOf(c));
  });

  it('reload on SIGHUP only the replica signalled, which records its new version for the others to see', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const others = [versionOf(b), versionOf(c)];
    edit(a, 'signalled');
    a.gw.child.kill('SIGHUP');
    await until(async () => (await ready(a)).rules_version === versionOf(a));
    expect([(await ready(b)).rules_version, (await ready(c)).rules_version]).toEqual(others);
    await until(async () => byId((await listed(b)).items)[a.id]!.rules_version === versionOf(a));
  });
});
