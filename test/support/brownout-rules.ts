// The example rules with brownout windows (src/rules/brownouts.ts), in a folder of their own.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_RULES } from '../helper.js';

const dirs: string[] = [];

/** Removes every folder `rulesWith` made (call from afterAll). */
export const removeBrownoutRules = () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
};

export const at = (ms: number) => new Date(ms).toISOString();
/** One window as a YAML flow map. */
export const window = (startMs: number, minutes: number) => `{ start: "${at(startMs)}", minutes: ${minutes} }`;

/**
 * A copy of the example rules with `telegram` under the telegram bot's `legacy:` and `workspace` as
 * the brightpath workspace's default list (each a YAML flow list).
 */
export function rulesWith(windows: { telegram?: string; workspace?: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-brownouts-'));
  dirs.push(dir);
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  const file = join(dir, 'brightpath.yaml');
  let text = readFileSync(file, 'utf8');
  if (windows.telegram !== undefined)
    text = text.replace(
      '      sunset: 2027-03-01\n',
      `      sunset: 2027-03-01\n      brownouts: ${windows.telegram}\n`,
    );
  if (windows.workspace !== undefined)
    text = text.replace('  custom_fields:\n', `  legacy:\n    brownouts: ${windows.workspace}\n  custom_fields:\n`);
  writeFileSync(file, text);
  return dir;
}
