// The rules version: a hash of the files, the same for the same files wherever they are, shown by
// /readyz, /metrics and the admin API, and moved by a reload that changed a file.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
      const before = (await gw.app.inject({ method: 'GET', url: '/readyz' })).json<{ rules_version: string }>().rules_version;
      expect(before).toBe(createRulesHolder(EXAMPLE_RULES).version().version);
      expect((await gw.app.inject({ method: 'GET', url: '/metrics' })).body).toContain(`lead_gateway_rules_info{version="${before}"} 1`);
      expect((await gw.admin('GET', '/admin/v1/rules')).json()).toMatchObject({ rules_version: before, workspaces: 2 });

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
});
