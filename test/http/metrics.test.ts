// GET /metrics: Prometheus text with requests, events by outcome, answers by result, legacy calls.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const metrics = async () => {
  const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return res.body;
};
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
};

describe('metrics', () => {
  it('counts requests, outcomes, replays, conflicts, answers and legacy calls', async () => {
    const key = await gw.issueKey('brightpath:telegram-bot');
    const body = { event_id: 'm-1', first_name: 'Metrics', answers: { laptop: 'yes', shoe_size: 41 } };
    await gw.submit(key, body);
    await gw.submit(key, body);
    await gw.submit(key, { ...body, first_name: 'Other' });
    await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: 'metrics-legacy-key' });
    await gw.app.inject({
      method: 'GET',
      url: '/api/bots/api/statuses/',
      headers: { 'x-bot-api-key': 'metrics-legacy-key' },
    });

    const text = await metrics();
    expect(
      value(text, 'lead_gateway_http_requests_total{method="POST",route="/api/integrations/v1/leads/",status="201"}'),
    ).toBe(1);
    expect(value(text, 'lead_gateway_events_total{endpoint="leads",outcome="created"}')).toBe(1);
    expect(value(text, 'lead_gateway_events_total{endpoint="leads",outcome="replayed"}')).toBe(1);
    expect(value(text, 'lead_gateway_events_total{endpoint="leads",outcome="conflict"}')).toBe(1);
    expect(value(text, 'lead_gateway_answers_total{result="written"}')).toBe(1);
    expect(value(text, 'lead_gateway_answers_total{result="unmapped"}')).toBe(1);
    expect(
      value(
        text,
        'lead_gateway_legacy_calls_total{integration="brightpath:telegram-bot",route="GET /api/bots/api/statuses/"}',
      ),
    ).toBe(1);
    expect(text).toMatch(
      /lead_gateway_http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/api\/integrations\/v1\/leads\/"\}/,
    );
  });

  it('publishes the process series under their standard names and the release in lead_gateway_build_info', async () => {
    const text = await metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).not.toMatch(/lead_gateway_process_|lead_gateway_nodejs_/);
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(value(text, `lead_gateway_build_info{version="${version}",node="${process.versions.node}"}`)).toBe(1);
  });

  it('labels unknown paths as unmatched, never with the raw URL', async () => {
    // A path no metric's number can contain by chance (digits could: a byte count, a duration).
    await gw.app.inject({ method: 'GET', url: '/no/such/path/unmatched-probe' });
    const text = await metrics();
    expect(text).not.toContain('unmatched-probe');
    expect(text).toMatch(/route="unmatched",status="404"/);
  });
});
