// The unlinked legacy leads of a page of person ids, found by the store on every engine: the id each
// engine makes in its statement is the id src/lead/external-id.ts makes in JavaScript, for every kind
// of member value, so the 404 list names the same leads while reading only those.
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import type { Lead } from '../../../src/store/repos/leads.js';
import { personIdTemplate, renderExternalId } from '../../../src/lead/external-id.js';
import { TRIMMED_CHARACTERS } from '../../../src/store/person-id.js';
import { onEachEngine } from '../../support/engines.js';
import { aContact, aLead } from '../../support/records.js';

/** Member values a bot may have sent, each on a lead of its own: strings, numbers, and what gives no id. */
const VALUES: unknown[] = [
  778,
  '778',
  ' 778 ',
  '\u00a0778\t',
  '\u3000779\u2028',
  '\ufeff780\n',
  0,
  -5,
  0.5,
  0.30000000000000004,
  1e21,
  1.5e300,
  1e-7,
  1.234e-10,
  123456789012345680000,
  0.000001,
  'Дилноза',
  'a b',
  '',
  '   ',
  true,
  null,
  { nested: 1 },
  [1, 2, 3],
];

const TEMPLATES = [
  'telegram:{extra_data.telegram_id}',
  '{extra_data.telegram_id}',
  'x{extra_data.a.b}y{last_name}',
  '{first_name}-{phone}',
  '{extra_data.tags.length}',
  '{extra_data.length}',
  '{id}',
  '{email}',
  'fixed',
];

/** The lead of value `i`: the value under each member the templates above name. */
const leadOf = (i: number, value: unknown, createdAt: string): Lead =>
  aLead(`l${String(i).padStart(2, '0')}`, {
    contactId: `c${i}`,
    origin: 'legacy',
    createdAt,
    updatedAt: createdAt,
    firstName: typeof value === 'string' ? value : 'Ann',
    lastName: typeof value === 'string' ? value : null,
    phone: typeof value === 'number' ? String(value) : ' +998 90 ',
    email: typeof value === 'string' ? `${value}@x` : null,
    extraData: { telegram_id: value, a: { b: value }, tags: Array.isArray(value) ? value : [value], length: value },
  });

async function withLegacyLeads(store: Store): Promise<void> {
  await store.transact(async (tx) => {
    for (let i = 0; i < VALUES.length; i++) {
      await tx.contacts.insert(aContact(`c${i}`));
      await tx.leads.insert(leadOf(i, VALUES[i], `t${String(i).padStart(2, '0')}`));
    }
    // Never among the unlinked: a bound person's lead, a deleted lead, a v1 lead, another integration's.
    await tx.contacts.insert(aContact('c-bound'));
    await tx.contacts.bind('int-1', 'telegram:778', 'c-bound', 't');
    await tx.leads.insert({ ...leadOf(90, 778, 't90'), contactId: 'c-bound' });
    await tx.leads.insert({ ...leadOf(91, 778, 't91'), contactId: 'c0', deletedAt: 't92' });
    await tx.leads.insert({ ...leadOf(92, 778, 't92'), contactId: 'c0', origin: 'v1' });
    await tx.leads.insert({ ...leadOf(93, 778, 't93'), contactId: 'c0', integrationId: 'int-2' });
  });
}

it('trims what String.prototype.trim trims, and nothing else', () => {
  const trimmed = [...Array(0x10000).keys()].map((c) => String.fromCharCode(c)).filter((ch) => ch.trim() === '');
  expect(trimmed.join('')).toBe(TRIMMED_CHARACTERS);
});

onEachEngine((_engine, open) => {
  describe('unlinked legacy leads', () => {
    it('are counted and listed from the oldest, as many as asked', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withLegacyLeads(store);
      const all = await store.snapshot((r) => r.leads.listLegacy('int-1', true));
      expect(all).toHaveLength(VALUES.length);
      expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-1', 1_000))).toBe(VALUES.length);
      // Counted up to the maximum asked, no further.
      expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-1', 5))).toBe(5);
      expect(await store.snapshot((r) => r.leads.listLegacy('int-1', true, 3))).toEqual(all.slice(0, 3));
      expect((await store.snapshot((r) => r.leads.listLegacy('int-1', false, 2))).map((l) => l.id)).toEqual([
        'l00',
        'l01',
      ]);
      expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-3', 1_000))).toBe(0);
    });

    it('of a page of person ids are those whose id JavaScript makes by the template is among them, for every member value', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withLegacyLeads(store);
      const unlinked = await store.snapshot((r) => r.leads.listLegacy('int-1', true));
      for (const rule of TEMPLATES) {
        const template = personIdTemplate(rule)!;
        const made = unlinked.map((l) => renderExternalId(rule, l));
        const ids = [...new Set(made.filter((id) => id !== null))];
        // Every id some lead has, and ids no lead has: the leads found are those JavaScript finds.
        const page = [...ids, 'telegram:nobody', '778 ', 'x'];
        const found = await store.snapshot((r) => r.leads.unlinkedLegacyOf('int-1', template, page, 1_000));
        expect(
          found.map((l) => [l.id, renderExternalId(rule, l)]),
          rule,
        ).toEqual(unlinked.filter((_, i) => made[i] !== null).map((l) => [l.id, renderExternalId(rule, l)]));
        // Half the ids: only their leads.
        const half = ids.filter((_, i) => i % 2 === 0);
        const halfFound = await store.snapshot((r) => r.leads.unlinkedLegacyOf('int-1', template, half, 1_000));
        expect(
          halfFound.map((l) => l.id),
          rule,
        ).toEqual(unlinked.filter((l) => half.includes(renderExternalId(rule, l)!)).map((l) => l.id));
      }
      expect(
        await store.snapshot((r) =>
          r.leads.unlinkedLegacyOf('int-1', personIdTemplate('telegram:{extra_data.telegram_id}')!, [], 1_000),
        ),
      ).toEqual([]);
    });

    it('are looked through from the oldest, no further than the number examined', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withLegacyLeads(store);
      const rule = 'telegram:{extra_data.telegram_id}';
      // l00, l01 and l02 all have the id telegram:778; the oldest 2 examined find the first two only.
      const found = await store.snapshot((r) =>
        r.leads.unlinkedLegacyOf('int-1', personIdTemplate(rule)!, ['telegram:778'], 2),
      );
      expect(found.map((l) => l.id)).toEqual(['l00', 'l01']);
    });

    it("leave the list when their person is bound, whichever unit binds it, and a bound person's new legacy lead never joins it", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withLegacyLeads(store);
      const before = (await store.snapshot((r) => r.leads.listLegacy('int-1', true))).map((l) => l.id);
      await store.transact((tx) => tx.contacts.bind('int-1', 'telegram:c3', 'c3', 't'));
      // Bound to another integration: still unlinked here.
      await store.transact((tx) => tx.contacts.bind('int-2', 'telegram:c4', 'c4', 't'));
      await store.transact((tx) => tx.leads.insert({ ...leadOf(94, 1, 't94'), contactId: 'c3' }));
      await store.transact((tx) => tx.leads.insert({ ...leadOf(95, 1, 't95'), contactId: 'c4' }));
      const after = (await store.snapshot((r) => r.leads.listLegacy('int-1', true))).map((l) => l.id);
      expect(after).toEqual([...before.filter((id) => id !== 'l03'), 'l95']);
      expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-1', 1_000))).toBe(after.length);
      const found = await store.snapshot((r) =>
        r.leads.unlinkedLegacyOf('int-1', personIdTemplate('{id}')!, ['l03', 'l94', 'l95'], 1_000),
      );
      expect(found.map((l) => l.id)).toEqual(['l95']);
    });

    it('of a template naming nothing a lead has: no template to ask with', () => {
      for (const rule of [
        '{notes}',
        '{extra_data}',
        '{phone.x}',
        '{constructor}',
        'telegram:{extra_data.telegram_id}:{source}',
      ])
        expect(personIdTemplate(rule), rule).toBeNull();
      expect(personIdTemplate('tg:{extra_data.telegram_id}/{first_name}.')).toEqual({
        literals: ['tg:', '/', '.'],
        members: [{ extraData: ['telegram_id'] }, { column: 'first_name' }],
      });
    });
  });
});
