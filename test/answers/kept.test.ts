// What is kept of unmapped and invalid answers: up to caps per integration (distinct keys, answers per
// key, bytes). Past them an answer is still reported, named in `not_kept`, counted, and not stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_ANSWERS_PER_KEY, KEPT_BYTES_PER_INTEGRATION, KEPT_KEYS_PER_INTEGRATION } from '../../src/answers/keep.js';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let key: string;
const HANDLE = 'brightpath:telegram-bot';
let integrationId: string;

beforeAll(async () => {
  gw = await startGateway({ rateLimitPerMinute: 1_000_000 });
  key = await gw.issueKey(HANDLE);
  integrationId = gw.rules.current().findIntegration(HANDLE)!.id;
  expect(
    (
      await gw.submit(key, {
        event_id: 'seed',
        external_contact_id: 'telegram:1',
        first_name: 'Seed',
        phone: '+998901234567',
      })
    ).statusCode,
  ).toBe(201);
});
afterAll(() => gw.close());

const answer = (eventId: string, answers: Record<string, unknown>) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: { event_id: eventId, external_contact_id: 'telegram:1', answers },
  });
/** Counts as if the integration had kept that many answers of a key: the caps read these counts. */
const pretendKept = (answerKey: string, answers: number, bytes: number) =>
  gw.store.transact((tx) => tx.answers.addKept([{ integrationId, key: answerKey, answers, bytes }]));
const stored = (answerKey: string) => gw.inspect.answers.count({ key: answerKey });
const notKept = () => gw.store.snapshot((r) => r.answers.notKept(integrationId));

describe('unmapped and invalid answers under the caps', () => {
  it('are stored, and the answer has no not_kept member', async () => {
    const res = await answer('under-1', { kept_color: 'red', '': 'x', course: 'python' });
    expect(res.statusCode).toBe(200);
    expect(res.json().answers).toEqual({
      written: ['course'],
      unchanged: [],
      kept_existing: [],
      unmapped: ['kept_color'],
      invalid: [{ key: '', error: 'an answer key must not be empty' }],
    });
    expect(await stored('kept_color')).toBe(1);
    expect(await stored('')).toBe(1);
  });
});

describe(`past ${KEPT_ANSWERS_PER_KEY} answers of one key`, () => {
  it('an answer of that key is listed, named not kept, counted and not stored; another key is kept', async () => {
    await pretendKept('full_key', KEPT_ANSWERS_PER_KEY, 100);
    const before = await notKept();
    const res = await answer('per-key-1', { full_key: 'x', other_key: 'y' });
    expect(res.statusCode).toBe(200);
    expect(res.json().answers).toMatchObject({ unmapped: ['full_key', 'other_key'], not_kept: ['full_key'] });
    expect(await stored('full_key')).toBe(0);
    expect(await stored('other_key')).toBe(1);
    expect(await notKept()).toBe(before + 1);
    // Counting goes on past the cap.
    expect((await answer('per-key-2', { full_key: 'z' })).json().answers.not_kept).toEqual(['full_key']);
    expect(await notKept()).toBe(before + 2);
  });

  it('an invalid answer (an empty key) past its cap is listed in invalid and named not kept', async () => {
    await pretendKept('', KEPT_ANSWERS_PER_KEY, 10);
    const before = await stored('');
    const res = await answer('per-key-invalid', { '': 'x' });
    expect(res.json().answers).toMatchObject({
      invalid: [{ key: '', error: 'an answer key must not be empty' }],
      not_kept: [''],
    });
    expect(await stored('')).toBe(before);
  });
});

describe(`past ${KEPT_BYTES_PER_INTEGRATION} bytes`, () => {
  it('an answer that would pass the bytes is not kept; the replay answers the same', async () => {
    const { bytes } = await gw.store.snapshot((r) => r.answers.kept(integrationId, []));
    // Room for "small" ("small" + '"s"': 8 bytes), not for "big".
    await pretendKept('filler', 1, KEPT_BYTES_PER_INTEGRATION - bytes - 8);
    const res = await answer('bytes-1', { big: 'a'.repeat(100), small: 's' });
    expect(res.json().answers).toMatchObject({ unmapped: ['big', 'small'], not_kept: ['big'] });
    expect(await stored('big')).toBe(0);
    expect(await stored('small')).toBe(1);
    const replay = await answer('bytes-1', { big: 'a'.repeat(100), small: 's' });
    expect(replay.json()).toMatchObject({ replayed: true, answers: { not_kept: ['big'] } });
    await pretendKept('filler', -1, -(KEPT_BYTES_PER_INTEGRATION - bytes - 8));
  });
});

describe(`past ${KEPT_KEYS_PER_INTEGRATION} distinct keys`, () => {
  it('an answer of a new key is not kept, one of a key kept already still is', async () => {
    const { keys } = await gw.store.snapshot((r) => r.answers.kept(integrationId, []));
    await gw.store.transact((tx) =>
      tx.answers.addKept(
        Array.from({ length: KEPT_KEYS_PER_INTEGRATION - keys }, (_, i) => ({
          integrationId,
          key: `many_${i}`,
          answers: 1,
          bytes: 1,
        })),
      ),
    );
    const res = await answer('keys-1', { brand_new: 'x', many_0: 'y' });
    expect(res.json().answers).toMatchObject({ unmapped: ['brand_new', 'many_0'], not_kept: ['brand_new'] });
    expect(await stored('brand_new')).toBe(0);
    expect(await stored('many_0')).toBe(1);
  });

  it('a lead submission past the caps succeeds and names what it did not keep', async () => {
    const res = await gw.submit(key, {
      event_id: 'keys-lead',
      first_name: 'Aziza',
      phone: '+998901239999',
      answers: { another_new: 'x', course: 'python' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().answers).toMatchObject({
      written: ['course'],
      unmapped: ['another_new'],
      not_kept: ['another_new'],
    });
    expect(await stored('another_new')).toBe(0);
  });
});
