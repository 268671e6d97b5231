// The answers 404 list and the migration report read what they show, not every unlinked legacy lead:
// with thousands of them, a page of 404s reads only the leads it names, the console reads a count and
// the leads it lists, and the admin API's report (which lists them all) reads them once. Rows are
// counted at the store's repositories, in the real routes; and a page's read holds up no other
// integration's lead, nor waits for a unit that holds the writer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { aContact, aLead } from '../support/records.js';
import { createUsageRecorder } from '../../src/migration/usage.js';
import { visibleIntegrations } from '../../src/console/overview.js';
import { UNLINKED_LEADS_SHOWN } from '../../src/console/routes.js';
import { REPORT_UNLINKED_ITEMS } from '../../src/migration/report.js';
import type { Integration } from '../../src/rules/catalog.js';
import type { Repos, Store } from '../../src/store/store.js';

const HANDLE = 'brightpath:telegram-bot';
const OF = `/admin/v1/integrations/${HANDLE}`;
const UNLINKED = 5_000;
/** 404s recorded for these ids, the latest last; the first three name 1, 2 and 1 of the unlinked leads. */
const NOT_FOUND = ['telegram:600007', 'telegram:600042', 'telegram:604998', 'telegram:nobody-1', 'telegram:nobody-2'];

let gw: Gateway;
let owner: ConsoleClient;
let integration: Integration;
/** The leads each 404 id names: the one whose telegram_id is its number, and a second for 600042. */
const named = new Map<string, string[]>();

/**
 * Counts the rows the repositories answer, per repository and method, in the reads, peeks and units of
 * the gateway's store while armed; `hold`, when set, keeps the next read's snapshot open until it resolves.
 */
function observe(store: Store) {
  const rows = new Map<string, number>();
  const calls = new Map<string, number>();
  const state = { armed: false, hold: null as Promise<void> | null, reading: [] as (() => void)[] };
  const counted = (repos: Repos): Repos =>
    new Proxy(repos, {
      get: (target, repoName) => {
        const repo = Reflect.get(target, repoName) as object;
        return new Proxy(repo, {
          get: (r, method) => {
            const member = Reflect.get(r, method) as unknown;
            if (typeof member !== 'function' || !state.armed) return member;
            return async (...args: unknown[]) => {
              const answer = (await (member as (...a: unknown[]) => Promise<unknown>).apply(r, args)) as unknown;
              const key = `${String(repoName)}.${String(method)}`;
              calls.set(key, (calls.get(key) ?? 0) + 1);
              rows.set(
                key,
                (rows.get(key) ?? 0) +
                  (Array.isArray(answer) ? answer.length : answer === null || answer === undefined ? 0 : 1),
              );
              return answer;
            };
          },
        });
      },
    });
  const methods = store as unknown as Record<
    'snapshot' | 'readOne' | 'transact',
    (fn: (r: Repos) => Promise<unknown>, ...rest: unknown[]) => Promise<unknown>
  >;
  // Not `readCommitted`: SQLite's is its `snapshot`, counted there (PostgreSQL's, a readOne, reads no lead of these pages).
  for (const name of ['readOne', 'transact'] as const) {
    const original = methods[name];
    methods[name] = (fn, ...rest) => original((r) => fn(counted(r)), ...rest);
  }
  const read = methods.snapshot;
  methods.snapshot = (fn) =>
    read(async (r) => {
      const answer = await fn(counted(r));
      // Held once: the first read to end after `hold` is set (the page's), not the reads after it.
      const hold = state.hold;
      state.hold = null;
      if (hold) {
        state.reading.splice(0).forEach((told) => told());
        await hold;
      }
      return answer;
    });
  const sum = (prefix: string, of: Map<string, number>) =>
    [...of].filter(([key]) => key.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
  return {
    state,
    /** Counts from zero, counting only what `fn` reads. */
    async during<T>(
      fn: () => Promise<T>,
    ): Promise<{ answer: T; rows: (prefix?: string) => number; calls: (prefix: string) => number }> {
      rows.clear();
      calls.clear();
      state.armed = true;
      try {
        const answer = await fn();
        return { answer, rows: (prefix = '') => sum(prefix, rows), calls: (prefix) => sum(prefix, calls) };
      } finally {
        state.armed = false;
      }
    },
    /** Resolves once a read has made its reads and is held open. */
    readHeld: () => new Promise<void>((resolve) => state.reading.push(resolve)),
  };
}

let observed: ReturnType<typeof observe>;

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  integration = gw.rules.current().findIntegration(HANDLE)!;
  // Legacy leads made while no rule linked them: no binding to the integration, each a person of its own.
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString();
  const lead = (i: number, telegramId: unknown) => {
    const contactId = randomUUID();
    return {
      contact: aContact(contactId, { workspaceId: integration.workspace.id }),
      lead: aLead(randomUUID(), {
        workspaceId: integration.workspace.id,
        contactId,
        integrationId: integration.id,
        origin: 'legacy',
        createdAt: at(i),
        updatedAt: at(i),
        extraData: { telegram_id: telegramId },
      }),
    };
  };
  const made = Array.from({ length: UNLINKED - 1 }, (_, i) => lead(i, 600_000 + i)).concat([
    lead(UNLINKED, ' 600042 '),
  ]);
  for (let from = 0; from < made.length; from += 1_000) {
    await gw.store.transact(async (tx) => {
      for (const m of made.slice(from, from + 1_000)) {
        await tx.contacts.insert(m.contact);
        await tx.leads.insert(m.lead);
      }
    });
  }
  for (const id of NOT_FOUND)
    named.set(
      id,
      made.filter((m) => `telegram:${String(m.lead.extraData!.telegram_id).trim()}` === id).map((m) => m.lead.id),
    );
  const usage = createUsageRecorder(gw.store);
  NOT_FOUND.forEach((id, i) => usage.recordNotFound(integration.id, id, new Date(Date.UTC(2026, 10, 20, i))));
  await usage.close();

  await addUser(gw, 'brightpath-owner', 'brightpath');
  owner = consoleClient(gw.app, { gw });
  expect((await owner.signIn('brightpath-owner')).statusCode).toBe(303);
  observed = observe(gw.store);
});
afterAll(() => gw.close());

const namedCount = () => [...named.values()].reduce((n, ids) => n + ids.length, 0);

describe(`with ${UNLINKED} unlinked legacy leads`, () => {
  it('a page of answers 404s reads only the legacy leads it names, and names them as before', async () => {
    const { answer: res, rows } = await observed.during(() => gw.admin('GET', `${OF}/not-found?limit=500`));
    expect(res.statusCode).toBe(200);
    const page = res.json<{
      items: { external_contact_id: string; legacy_leads: { lead_id: string; code: string }[] }[];
    }>();
    expect(page.items.map((e) => e.external_contact_id)).toEqual([...NOT_FOUND].reverse());
    for (const e of page.items) {
      expect(e.legacy_leads.map((l) => l.lead_id)).toEqual(named.get(e.external_contact_id));
      expect(e.legacy_leads.every((l) => l.code === 'not_linked')).toBe(true);
    }
    expect(namedCount()).toBe(4);
    expect(rows('leads.')).toBe(namedCount());
    // The page's entries, their totals and the bindings of the ids that name a lead: nothing per legacy lead.
    expect(rows()).toBeLessThanOrEqual(2 * page.items.length + 1 + namedCount());

    const { answer: html, rows: consoleRows } = await observed.during(() =>
      owner.get(`/console/integrations/${HANDLE}/not-found`),
    );
    expect(html.statusCode).toBe(200);
    for (const id of named.get('telegram:600042')!) expect(html.body).toContain(id);
    expect(consoleRows('leads.')).toBe(namedCount());
  });

  it('the console reads a count and the leads it lists; the overview a count, and no answers-404 entry', async () => {
    const { answer: page, rows } = await observed.during(() => owner.get(`/console/integrations/${HANDLE}`));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-testid="unlinked-count">${UNLINKED} legacy lead(s) not linked to a person.`);
    expect(page.body).toContain(`data-testid="unlinked-rest">And ${UNLINKED - UNLINKED_LEADS_SHOWN} more`);
    // The leads it lists are the report's first, in its order.
    const report = (await gw.admin('GET', `${OF}/report`)).json<{ unlinked_legacy_leads: { lead_id: string }[] }>();
    const listed = [
      .../<table data-testid="unlinked">[\s\S]*?<\/table>/.exec(page.body)![0].matchAll(/<code>([^<]+)<\/code>/g),
    ].map((m) => m[1]);
    expect(listed).toEqual(report.unlinked_legacy_leads.slice(0, UNLINKED_LEADS_SHOWN).map((l) => l.lead_id));
    expect(rows('leads.')).toBe(1 + UNLINKED_LEADS_SHOWN + namedCount());

    const { answer: overview, rows: overviewRows } = await observed.during(() => owner.get('/console/integrations'));
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(`${UNLINKED} legacy lead(s) are not linked`);
    const shown = visibleIntegrations(gw.rules.current(), { workspace: 'brightpath' } as Parameters<
      typeof visibleIntegrations
    >[1]).length;
    // A count per integration, and no answers-404 entry (the overview names none).
    expect(overviewRows('leads.')).toBe(shown);
  });

  it("the admin API's report names the first REPORT_UNLINKED_ITEMS unlinked legacy leads and counts them all, reading no more", async () => {
    const { answer: res, rows, calls } = await observed.during(() => gw.admin('GET', `${OF}/report`));
    expect(res.statusCode).toBe(200);
    const report = res.json<{
      unlinked_legacy_leads: unknown[];
      unlinked_legacy_leads_total: number;
      readiness: { reasons: string[] };
      answers_not_found: { items: unknown[] };
    }>();
    expect(report.unlinked_legacy_leads).toHaveLength(REPORT_UNLINKED_ITEMS);
    expect(report.unlinked_legacy_leads_total).toBe(UNLINKED);
    expect(report.readiness.reasons).toContain(
      `${UNLINKED} legacy lead(s) are not linked: their answers would get 404`,
    );
    expect(calls('leads.listLegacy')).toBe(1);
    expect(rows('leads.')).toBe(1 + REPORT_UNLINKED_ITEMS + namedCount());
  });

  it('a page and a report wait for no unit that holds the writer', async () => {
    // Nothing counted waits for a flush: the pages below write nothing.
    expect((await gw.admin('GET', `${OF}/report`)).statusCode).toBe(200);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A unit that holds the writer (SQLite) or one of the pool's connections (PostgreSQL).
    const held = gw.store.transact(() => gate);
    try {
      for (const url of [
        `${OF}/not-found`,
        `${OF}/report`,
        `/console/integrations/${HANDLE}`,
        `/console/integrations/${HANDLE}/not-found`,
      ]) {
        const answer = url.startsWith('/console') ? owner.get(url) : gw.admin('GET', url);
        const waited = await Promise.race([
          answer,
          new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
        ]);
        expect(waited, url).not.toBe('still waiting');
        expect((await answer).statusCode, url).toBe(200);
      }
    } finally {
      release();
      await held;
    }
  });

  it("another integration's v1 lead is answered while a page's and a report's reads are open", async () => {
    const key = await gw.issueKey('smile-dental:booking-form');
    let n = 0;
    for (const url of [`${OF}/not-found`, `${OF}/report`]) {
      let release!: () => void;
      const reading = observed.readHeld();
      observed.state.hold = new Promise<void>((resolve) => (release = resolve));
      const page = gw.admin('GET', url);
      try {
        await reading;
        const lead = gw.submit(key, {
          event_id: `held-read-${++n}`,
          external_contact_id: `smile:held-${n}`,
          first_name: 'Held',
        });
        const waited = await Promise.race([
          lead,
          new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
        ]);
        expect(waited, url).not.toBe('still waiting');
        expect((await lead).statusCode, url).toBe(201);
      } finally {
        observed.state.hold = null;
        release();
      }
      expect((await page).statusCode, url).toBe(200);
    }
  });
});
