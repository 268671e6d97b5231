// Text a bot chose (the names of members it sent, of tags it created, the person ids it asked about) is
// data wherever it is shown: literal text in the Markdown guide, on the legacy and the admin route, and
// never a control character at the operator's terminal, in any CLI command, format or backend; rows
// stored before either rule included. A tag name follows the printable-text rule of every name.
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { runOwned } from '../support/owned.js';
import { builtCli, ROOT } from '../support/child-gateway.js';
import { databaseEnv } from '../support/store.js';
import { stableId } from '../../src/rules/ids.js';
import type { PortingGuide } from '../../src/porting/guide.js';

let gw: Gateway;
let base: string;
const KEY = 'bot-text-legacy-key';
const HANDLE = 'brightpath:telegram-bot';
const LEGACY = '/api/bots/api';

/** What a hostile bot sends, each a way out of a Markdown cell or into the terminal. */
const MARKDOWN = [
  '<img src=x onerror=alert(1)>',
  '[re-verify](https://evil.example/login)',
  '![x](https://evil.example/p.png)',
  'a | b | c',
  '```',
  '<https://evil.example>',
  '*bold* _it_',
];
const TERMINAL = [
  '\u001b[2J\u001b[H',
  '\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007',
  'over\rwrite',
  '\u009b31mred',
  'del\u007f',
  '\u202egnp.exe',
  'bell\u0007',
];

/** Text with each character a terminal acts on written as an escape, as a reader sees it: `\n`, `\r`, `\t`, else `\u001b`. */
const visible = (text: string) =>
  text.replace(/[^ -~\u00a0-\u061b\u061d-\u200d\u2010-\u2027\u202f-\u2065\u206a-\uffff]/g, (c) =>
    c === '\n'
      ? '\\n'
      : c === '\r'
        ? '\\r'
        : c === '\t'
          ? '\\t'
          : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The first character a terminal acts on (C0 but the line feed, DEL, C1, bidi controls, line and paragraph separators), as U+XXXX; null if none. */
function unsafeIn(text: string): string | null {
  for (const c of text) {
    const code = c.codePointAt(0)!;
    const unsafe =
      (code < 0x20 && code !== 0x0a) ||
      (code >= 0x7f && code <= 0x9f) ||
      [0x061c, 0x200e, 0x200f].includes(code) ||
      (code >= 0x2028 && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069);
    if (unsafe) return `U+${code.toString(16).padStart(4, '0')}`;
  }
  return null;
}

const bot = (method: string, path: string, body?: unknown) =>
  gw.app.inject({
    method: method as 'GET',
    url: `${LEGACY}${path}`,
    headers: { 'x-bot-api-key': KEY },
    ...(body === undefined ? {} : { payload: body as object }),
  });

beforeAll(async () => {
  gw = await startGateway();
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  gw.secrets.add(KEY);
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY })).statusCode).toBe(201);
  const integration = gw.rules.current().findIntegration(HANDLE)!;
  const ws = integration.workspace;

  // Tags the bot may create (printable), and tags stored before the rule (control characters).
  const tagIds: string[] = [];
  for (const name of MARKDOWN) {
    const res = await bot('POST', '/tags/create/', { name });
    expect(res.statusCode, name).toBe(201);
    tagIds.push(res.json<{ id: string }>().id);
  }
  const at = new Date().toISOString();
  for (const name of TERMINAL) {
    const id = stableId(ws.slug, 'tag', name);
    await gw.store.transact((tx) => tx.legacyTags.ensure({ workspaceId: ws.id, id, name, color: null, createdAt: at }));
    tagIds.push(id);
  }
  const created = await bot('POST', '/leads/', {
    first_name: 'Lola',
    extra_data: { telegram_id: 5151 },
    ...Object.fromEntries([...MARKDOWN, ...TERMINAL].map((m) => [m, 'x'])),
  });
  expect(created.statusCode).toBe(201);
  expect((await bot('PATCH', `/leads/${created.json<{ id: string }>().id}/`, { tag_ids: tagIds })).statusCode).toBe(
    200,
  );

  // Rows stored before the rules: ignored names, a sample and a 404'd person id of the bot's choosing.
  await gw.store.transact(async (tx) => {
    await tx.states.countIgnored(
      integration.id,
      TERMINAL.map((t) => `old${t}`),
      at,
      1_000,
    );
    await tx.states.addUsage([
      {
        integrationId: integration.id,
        interface: 'legacy',
        route: `PUT ${LEGACY}/leads/:id/`,
        hour: at.slice(0, 13),
        calls: 1,
        lastSeen: at,
        okCalls: 1,
        lastOk: at,
      },
    ]);
    const names = Object.fromEntries([...MARKDOWN, ...TERMINAL].map((m) => [m, '<text>']));
    await tx.states.putSamples([
      {
        integrationId: integration.id,
        route: `PUT ${LEGACY}/leads/:id/`,
        at,
        sample: {
          method: 'PUT',
          path: `${LEGACY}/leads/<id>/`,
          query: names,
          body: { ...names, extra_data: { age: '<number>', ...names } },
          status: 200,
          truncated: false,
        },
      },
    ]);
    await tx.states.countNotFound(
      TERMINAL.map((t, i) => ({
        integrationId: integration.id,
        externalContactId: `telegram:${t}`,
        calls: 1,
        firstAt: at,
        lastAt: new Date(Date.parse(at) + i).toISOString(),
      })),
      1_000,
    );
  });
  // The admin route writes what the recorder holds before it reads.
  expect((await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)).statusCode).toBe(200);
});
afterAll(() => gw.close());

describe('finding 2: a tag name is printable text', () => {
  it('refuses a tag name holding a control character with a 422, storing nothing; a trailing line break is trimmed', async () => {
    const before = (await bot('GET', '/tags/')).json<unknown[]>().length;
    for (const name of ['Laptop\u001b[2J', 'x\u0007y', 'a\u009bb', 'two\nlines', 'del\u007f']) {
      const res = await bot('POST', '/tags/create/', { name });
      expect(res.statusCode, JSON.stringify(name)).toBe(422);
      expect(res.json()).toMatchObject({ status: 422, code: 'validation-failed' });
    }
    expect((await bot('GET', '/tags/')).json<unknown[]>().length).toBe(before);
    const trimmed = await bot('POST', '/tags/create/', { name: 'Printable tag\n' });
    expect(trimmed.statusCode).toBe(201);
    expect(trimmed.json()).toMatchObject({ name: 'Printable tag' });
  });
});

/** The HTML of the guide's Markdown in the most permissive renderer a reader may use: raw HTML and bare links on. */
const md = new MarkdownIt({ html: true, linkify: true });

/** The rendered text of each cell of the table under `heading`, row by row. */
function tableCells(source: string, heading: string): string[][] {
  const tokens = md.parse(source, {});
  const start = tokens.findIndex((t) => t.type === 'inline' && t.content === heading);
  const rows: string[][] = [];
  let row: string[] | null = null;
  for (const t of tokens.slice(start + 1)) {
    if (t.type === 'heading_open') break;
    if (t.type === 'tr_open') row = [];
    if (t.type === 'tr_close' && row) rows.push(row);
    if (t.type === 'inline' && row) row.push((t.children ?? []).map((c) => c.content).join(''));
  }
  return rows.slice(1);
}

describe('finding 2: the Markdown guide shows what a bot chose as literal text', () => {
  const markdownOf = async () => ({
    legacy: (await bot('GET', '/porting-guide/?format=markdown')).body,
    admin: (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide?format=markdown`)).body,
  });

  it('renders no link, image or raw HTML, breaks out of no fence and adds no table cell, on the legacy and the admin route', async () => {
    const guide = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)).json<PortingGuide>();
    const tags = guide.ignored_legacy_fields.filter((f) => f.field.startsWith('tag:'));
    expect(tags.map((f) => f.field).sort()).toEqual([...MARKDOWN, ...TERMINAL].map((n) => `tag:${n}`).sort());
    for (const source of Object.values(await markdownOf())) {
      const tokens = md.parse(source, {});
      const kinds = new Set(tokens.flatMap((t) => [t.type, ...(t.children ?? []).map((c) => c.type)]));
      for (const kind of ['link_open', 'image', 'html_inline', 'html_block']) expect(kinds.has(kind), kind).toBe(false);
      const html = md.render(source);
      expect(html).not.toMatch(/<a |<img |<script/);
      // A fence per sample and per v1 example of a translated route: no fence ends early, none runs on.
      const translated = guide.routes.filter((r) => r.kind === 'translated');
      expect(translated.filter((r) => r.sample).length).toBeGreaterThanOrEqual(3);
      expect(tokens.filter((t) => t.type === 'fence').length).toBe(
        translated.filter((r) => r.sample).length + translated.filter((r) => r.v1_example).length,
      );
      // Each ignored field is one row of four cells, its first cell the name as the bot sent it (controls as escapes).
      const rows = tableCells(source, 'Ignored legacy fields');
      expect(rows.map((r) => r.length)).toEqual(guide.ignored_legacy_fields.map(() => 4));
      expect(rows.map((r) => r[0])).toEqual(guide.ignored_legacy_fields.map((f) => visible(f.field)));
      expect(unsafeIn(source)).toBeNull();
    }
  });
});

/** The CLI as a real process, on the gateway's database (SQLite file or PostgreSQL) or over its admin API. */
async function cli(args: string[], overApi: boolean): Promise<{ code: number | null; out: string; err: string }> {
  const env = {
    ...process.env,
    ...databaseEnv(gw.store),
    RULES_DIR: EXAMPLE_RULES,
    LEAD_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  const run = await runOwned(process.execPath, [builtCli(), ...(overApi ? ['--url', base] : []), ...args], {
    cwd: ROOT,
    env,
    timeoutMs: 30_000,
  });
  return { code: run.code, out: run.stdout, err: run.stderr };
}

describe('finding 2: the CLI gives the terminal no control character a bot chose', { timeout: 120_000 }, () => {
  const commands = [
    ['porting-guide', HANDLE],
    ['report', HANDLE],
    ['not-found', HANDLE],
  ];
  for (const overApi of [false, true]) {
    for (const json of [false, true]) {
      it(`${commands.map((c) => c[0]).join(', ')}${json ? ' --json' : ''} ${overApi ? 'over --url' : 'on the database'}`, async () => {
        for (const command of commands) {
          const run = await cli([...(json ? ['--json'] : []), ...command], overApi);
          expect(run.code, run.err).toBe(0);
          for (const [stream, text] of [
            ['stdout', run.out],
            ['stderr', run.err],
          ] as const) {
            expect(unsafeIn(text), `${command[0]} ${stream}`).toBeNull();
          }
          // The bot's text is there, written as escapes: nothing was dropped.
          expect(run.out, command[0]).toMatch(/\\u001b/);
          if (json && command[0] === 'not-found') {
            const served = await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/not-found`);
            expect(JSON.parse(run.out)).toEqual(served.json());
          }
          if (json && command[0] === 'porting-guide') {
            const served = (
              await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)
            ).json<PortingGuide>();
            expect({ ...JSON.parse(run.out), generated_at: null }).toEqual({ ...served, generated_at: null });
          }
        }
      });
    }
  }
});
