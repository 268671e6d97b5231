// /docs/migration: the bot authors' guide as a page for browsers and as Markdown on request; never
// the service team's runbook.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guidePage } from '../../src/http/docs-routes.js';
import { startGateway, type Gateway } from '../helper.js';
import { ROOT } from '../support/child-gateway.js';

const guide = readFileSync(join(ROOT, 'docs/migration.md'), 'utf8');
const runbook = readFileSync(join(ROOT, 'docs/runbook.md'), 'utf8');
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.close();
});

const get = (accept?: string) =>
  gw.app.inject({ method: 'GET', url: '/docs/migration', headers: accept === undefined ? {} : { accept } });

describe('GET /docs/migration', () => {
  it('answers a browser with an HTML page whose policy allows its own inline style and nothing else', async () => {
    const res = await get(BROWSER_ACCEPT);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toMatch(/^<!doctype html>/);
    expect(res.body).toContain('<title>Moving your bot to the v1 intake API</title>');
    expect(res.body).toContain('<h2>The call that replaces each old call</h2>');
    expect(res.body).toContain('<table>');
    expect(res.body).not.toMatch(/<script|<link|<img|<iframe|https?:\/\/(?!www\.rfc)/i);

    const csp = String(res.headers['content-security-policy']);
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name = '', ...values]) => [name, values]),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(csp).not.toMatch(/unsafe-|\*|https?:/);
    // The one style of the page is the one the policy allows, by its hash.
    const styles = [...res.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(styles).toHaveLength(1);
    expect(directives.get('style-src')).toEqual([
      `'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`,
    ]);
  });

  it('answers HTML without an Accept header, to */* and when Markdown is not preferred', async () => {
    for (const accept of [undefined, '*/*', 'text/markdown;q=0.5, text/html', 'text/markdown;q=0, */*', 'text/plain']) {
      const res = await get(accept);
      expect(res.headers['content-type'], String(accept)).toBe('text/html; charset=utf-8');
      expect(res.headers.vary).toBe('Accept');
    }
  });

  it('answers the Markdown itself to a client that prefers it', async () => {
    for (const accept of ['text/markdown', 'text/markdown, text/html;q=0.9', 'text/*;q=0.5, text/markdown']) {
      const res = await get(accept);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type'], accept).toBe('text/markdown; charset=utf-8');
      expect(res.headers.vary).toBe('Accept');
      expect(res.headers['content-security-policy']).toBeUndefined();
      expect(res.body).toBe(guide);
    }
  });

  it('never carries the runbook: none of its headings, commands or admin calls, in either form', async () => {
    const markers = runbook
      .split('\n')
      .filter((line) => /^#{1,3} |npm run cli|\/admin\/v1\/|ADMIN_TOKEN/.test(line))
      .map((line) => line.replace(/^#+ /, '').trim());
    expect(markers.length).toBeGreaterThan(20);
    const markdown = (await get('text/markdown')).body;
    const html = (await get()).body;
    for (const marker of [...markers, 'Runbook', 'npm run cli', '/admin/v1', 'ADMIN_TOKEN', '--reason']) {
      expect(markdown, marker).not.toContain(marker);
      expect(html, marker).not.toContain(marker);
    }
  });

  it('links nowhere relative: every link of the page works where the gateway serves it', async () => {
    const hrefs = [...(await get()).body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    for (const href of hrefs) expect(href).toMatch(/^(https:\/\/|\/|#)/);
  });
});

describe('the guide page', () => {
  it('escapes raw HTML and drops script links in the Markdown it renders', () => {
    const page = guidePage(
      '# T <b>\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>\n',
    );
    expect(page).not.toMatch(/<script>|<img|href="javascript:/);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('<title>T &lt;b&gt;</title>');
  });
});
