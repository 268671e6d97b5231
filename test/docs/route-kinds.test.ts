// The calls a bot stops making are sorted one way: the porting guide says of each legacy route what
// docs/migration.md's table of replacements says (not needed, or not available), and the table names
// every legacy route the gateway does not translate.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRulesHolder } from '../../src/rules/loader.js';
import { buildGuide } from '../../src/porting/guide.js';
import { guideMarkdown } from '../../src/porting/markdown.js';
import { FORWARDED } from '../../src/legacy/routes.js';
import { EXAMPLE_RULES } from '../helper.js';
import { ROOT } from '../support/child-gateway.js';

const PREFIX = '/api/bots/api/';

/** Per legacy route (`METHOD /api/bots/api/path/:id/`), its kind in the table "The call that replaces each old call". */
function documentedKinds(): Map<string, 'not_needed' | 'not_available'> {
  const doc = readFileSync(join(ROOT, 'docs/migration.md'), 'utf8');
  const section = doc.split('## The call that replaces each old call')[1]!.split('\n## ')[0]!;
  const kinds = new Map<string, 'not_needed' | 'not_available'>();
  for (const line of section.split('\n')) {
    const [, calls, becomes] = /^\| (.*?) \| (.*) \|$/.exec(line) ?? [];
    const kind = becomes?.startsWith('not needed')
      ? 'not_needed'
      : becomes?.startsWith('not available')
        ? 'not_available'
        : null;
    if (kind === null || calls === undefined) continue;
    for (const [, method, path] of calls.matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`/g)) {
      kinds.set(`${method} ${PREFIX}${path!.replace(PREFIX, '').replaceAll('{id}', ':id')}`, kind);
    }
  }
  return kinds;
}

describe('finding 9: the calls a bot stops making', () => {
  it('are sorted by the porting guide as docs/migration.md sorts them, reading comments under not needed and adding one under not available', () => {
    const documented = documentedKinds();
    expect(documented.get('GET /api/bots/api/leads/:id/comments/')).toBe('not_needed');
    expect(documented.get('POST /api/bots/api/leads/:id/comments/')).toBe('not_available');
    // Every route the gateway does not translate is in the table.
    for (const [method, url] of [...FORWARDED, ['POST', '/api/bots/api/tags/create/']])
      expect(documented.has(`${method} ${url}`), `${method} ${url}`).toBe(true);

    const integration = createRulesHolder(EXAMPLE_RULES).current().findIntegration('brightpath:telegram-bot')!;
    const at = '2026-11-26T10:00:00.000Z';
    const usage = [...documented.keys()].map((route) => ({
      route,
      interface: 'legacy' as const,
      calls: 1,
      lastSeen: at,
      okCalls: 1,
      lastOk: at,
    }));
    const guide = buildGuide({
      integration,
      state: 'legacy',
      now: new Date(at),
      usage,
      samples: [],
      ignored: [],
      createdTags: new Map(),
    });
    expect(Object.fromEntries(guide.routes.map((r) => [r.route, r.kind]))).toEqual(Object.fromEntries(documented));

    // The Markdown lists each under the heading of its kind.
    const md = guideMarkdown(guide);
    const listed = (heading: string) =>
      [
        ...md
          .split(`## ${heading}`)[1]!
          .split('\n## ')[0]!
          .matchAll(/^- (.+): \d+ calls?$/gm),
      ].map((m) => m[1]);
    expect(listed('Not needed on v1').sort()).toEqual(
      [...documented]
        .filter(([, k]) => k === 'not_needed')
        .map(([r]) => r)
        .sort(),
    );
    expect(listed('Not available on v1').sort()).toEqual(
      [...documented]
        .filter(([, k]) => k === 'not_available')
        .map(([r]) => r)
        .sort(),
    );
  });
});
