// The drain chart's building: UTC buckets per hour and per day, zero-filling, the scale, the description.
import { describe, expect, it } from 'vitest';
import {
  bucketUsage,
  chartModel,
  defaultRange,
  describeTrend,
  niceMax,
  rangeStartHour,
} from '../../src/console/chart.js';

const NOW = new Date('2026-03-10T14:25:00Z');

describe('drain chart', () => {
  it('buckets the last 7 days per UTC hour, zero-filled, dropping hours outside the range', () => {
    const b = bucketUsage(
      [
        { hour: '2026-03-03T14', interface: 'legacy', calls: 9 },
        { hour: '2026-03-03T15', interface: 'legacy', calls: 2 },
        { hour: '2026-03-10T14', interface: 'legacy', calls: 3 },
        { hour: '2026-03-10T14', interface: 'v1', calls: 4 },
      ],
      '7d',
      NOW,
    );
    expect(b).toHaveLength(168);
    expect(b[0]).toEqual({ key: '2026-03-03T15', legacy: 2, v1: 0 });
    expect(b.at(-1)).toEqual({ key: '2026-03-10T14', legacy: 3, v1: 4 });
    expect(b.slice(1, -1).every((x) => x.legacy === 0 && x.v1 === 0)).toBe(true);
    expect(rangeStartHour('7d', NOW)).toBe('2026-03-03T15');
  });

  it('sums hours into UTC days for the last 30 days', () => {
    const b = bucketUsage(
      [
        { hour: '2026-03-10T00', interface: 'legacy', calls: 1 },
        { hour: '2026-03-10T23', interface: 'legacy', calls: 2 },
        { hour: '2026-02-09T23', interface: 'v1', calls: 5 },
        { hour: '2026-02-08T23', interface: 'v1', calls: 7 },
      ],
      '30d',
      NOW,
    );
    expect(b).toHaveLength(30);
    expect(b[0]).toEqual({ key: '2026-02-09', legacy: 0, v1: 5 });
    expect(b.at(-1)).toEqual({ key: '2026-03-10', legacy: 3, v1: 0 });
    expect(rangeStartHour('30d', NOW)).toBe('2026-02-09T00');
  });

  it('draws all-zero data on the base line with a scale of 1', () => {
    const m = chartModel(bucketUsage([], '7d', NOW), '7d');
    expect(m.max).toBe(1);
    expect(m.points.every((p) => p.yLegacy === m.base && p.yV1 === m.base)).toBe(true);
    expect(m.legacy).not.toContain('NaN');
    expect(m.xTicks).toHaveLength(7);
    expect(m.xTicks.at(-1)!.label).toBe('03-10');
  });

  it('scales to a rounded maximum and puts the largest count at the top', () => {
    expect([niceMax(0), niceMax(3), niceMax(7), niceMax(10), niceMax(11), niceMax(240)]).toEqual([
      1, 5, 10, 10, 20, 500,
    ]);
    const m = chartModel(
      [
        { key: '2026-03-09', legacy: 20, v1: 0 },
        { key: '2026-03-10', legacy: 0, v1: 10 },
      ],
      '30d',
    );
    expect(m.max).toBe(20);
    expect(m.points[0]!.yLegacy).toBe(12);
    expect(m.points[1]!.yV1).toBeCloseTo((12 + m.base) / 2, 0);
  });

  it('describes the trend with the first and latest day figures', () => {
    const b = bucketUsage(
      [
        { hour: '2026-02-09T10', interface: 'legacy', calls: 120 },
        { hour: '2026-03-10T10', interface: 'legacy', calls: 4 },
        { hour: '2026-03-10T11', interface: 'v1', calls: 90 },
      ],
      '30d',
      NOW,
    );
    expect(describeTrend(b, '30d')).toBe(
      'Over the last 30 days, per day: legacy calls fell from 120/day to 4/day; v1 calls rose from 0/day to 90/day (first day against the latest).',
    );
    expect(describeTrend(bucketUsage([], '7d', NOW), '7d')).toContain('legacy calls stayed at 0/day');
  });

  it('picks the shortest range that covers the first call, at least a day; the 7-day view without any call', () => {
    const at = (hour: string, calls = 1) => ({ hour, interface: 'legacy' as const, calls });
    expect(defaultRange([], NOW)).toBe('7d');
    expect(defaultRange([at('2026-03-03T10', 0)], NOW)).toBe('7d');
    expect(defaultRange([at('2026-03-10T14')], NOW)).toBe('24h');
    expect(defaultRange([at('2026-03-09T15'), at('2026-03-10T14')], NOW)).toBe('24h');
    expect(defaultRange([at('2026-03-09T14'), at('2026-03-10T14')], NOW)).toBe('7d');
    expect(defaultRange([at('2026-02-20T00')], NOW)).toBe('30d');
    const m = chartModel(bucketUsage([at('2026-03-10T14', 3)], '24h', NOW), '24h');
    expect(m.points).toHaveLength(24);
    expect(m.xTicks.map((t) => t.label)).toEqual(['20:00', '02:00', '08:00', '14:00']);
  });
});
