// The rules version: a hash of the files, the same for the same files wherever they are, shown by
// /readyz, /metrics and the admin API, and moved by a reload that changed a file.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway } from '../helper.js';
import { createRulesHolder } from '../../src/rules/loader.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const copyOfExampleRules = () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  dirs.push(dir);
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  return dir;
};

describe('the rules version', () => {
  it('is the same for the same files in any folder, and differs when a byte differs', () => {
    const a = createRulesHolder(copyOfExampleRules()).version().version;
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(createRulesHolder(copyOfExampleRules()).version().version).toBe(a);
    const changed = copyOfExampleRules();
    const file = join(changed, 'brightpath.yaml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# a comment\n`);
    expect(createRulesHolder(changed).version().version).not.toBe(a);
  });

  it('is shown by /readyz, /metrics and GET /admin/v1/rules, and a reload that changed a file answers the new one', async () => {
    const dir = copyOfExampleRules();
    const gw = await startGateway({ rulesDir: dir });
    try {
      const before = (await gw.app.inject({ method: 'GET', url: '/readyz' })).json<{ rules_version: string }>()
        .rules_version;
      expect(before).toBe(createRulesHolder(EXAMPLE_RULES).version().version);
      expect((await gw.app.inject({ method: 'GET', url: '/metrics' })).body).toContain(
        `lead_gateway_rules_info{version="${before}"} 1`,
      );
      const inForce = (await gw.admin('GET', '/admin/v1/rules')).json<{
        files: { name: string; sha256: string; content: string }[];
      }>();
      expect(inForce).toMatchObject({ rules_version: before, workspaces: 2, integrations: 3 });
      // Each file as read, what `lead-gateway rules diff` compares a folder with.
      expect(inForce.files).toEqual(
        ['brightpath.yaml', 'smile-dental.yaml'].map((name) => {
          const content = readFileSync(join(EXAMPLE_RULES, name), 'utf8');
          return { name, sha256: createHash('sha256').update(content).digest('hex'), content };
        }),
      );

      const file = join(dir, 'brightpath.yaml');
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited\n`);
      const reloaded = await gw.admin('POST', '/admin/v1/rules/reload');
      expect(reloaded.statusCode).toBe(200);
      const after = reloaded.json<{ rules_version: string }>().rules_version;
      expect(after).not.toBe(before);
      expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json().rules_version).toBe(after);
      const metrics = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toContain(`lead_gateway_rules_info{version="${after}"} 1`);
      expect(metrics).not.toContain(`version="${before}"`);
    } finally {
      await gw.close();
    }
  });

  it('GET /admin/v1/replicas lists this process alone when it is the only one, and a reload names its failure', async () => {
    const dir = copyOfExampleRules();
    const gw = await startGateway({ rulesDir: dir });
    try {
      const version = createRulesHolder(dir).version().version;
      const list = (await gw.admin('GET', '/admin/v1/replicas')).json();
      expect(list).toMatchObject({ rules_versions: [version], drift: false });
      expect(list.items).toEqual([
        expect.objectContaining({
          host: hostname(),
          pid: process.pid,
          rules_version: version,
          last_reload_error: null,
          this_replica: true,
        }),
      ]);
      expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({
        rules_version: version,
        rules_drift: false,
      });

      const reloaded = await gw.admin('POST', '/admin/v1/rules/reload');
      expect(reloaded.statusCode).toBe(200);
      expect(reloaded.json()).toMatchObject({
        reloaded: true,
        rules_version: version,
        not_answered: [],
        replicas: [{ id: list.items[0].id, outcome: 'reloaded' }],
      });

      writeFileSync(join(dir, 'broken.yaml'), 'format_version: 2\n');
      const refused = await gw.admin('POST', '/admin/v1/rules/reload');
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({
        code: 'validation-failed',
        replicas: [{ outcome: 'failed', rules_version: version }],
      });
      expect(refused.json().detail).toContain(join(dir, 'broken.yaml'));
      // The problems are of the request as a whole, not of a member of its (empty) body: the pointer "" (RFC 6901).
      expect(refused.json().errors.length).toBeGreaterThan(0);
      for (const e of refused.json().errors)
        expect(e).toEqual({ path: '', message: expect.stringContaining(join(dir, 'broken.yaml')) });
      const error = (await gw.admin('GET', '/admin/v1/replicas')).json().items[0].last_reload_error;
      expect(error.problems.length).toBeGreaterThan(0);
      for (const problem of error.problems) expect(problem).toContain(join(dir, 'broken.yaml'));
      expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json().rules_version).toBe(version);
    } finally {
      await gw.close();
    }
  });
});
