// The drain chart of an integration's page: legacy and v1 calls per hour (24 hours, 7 days) or per day (30 days),
// from the per-hour usage rows, as a plain SVG model the partial view draws. Pure functions, no store.
import type { HourlyUsage } from '../store/repos/states.js';

export const CHART_RANGES = ['24h', '7d', '30d'] as const;
export type ChartRange = (typeof CHART_RANGES)[number];

/** Buckets per range: 24 and 7 × 24 hours, 30 days (the current hour or day is the last bucket). */
const SPEC: Record<ChartRange, { buckets: number; ms: number; keyChars: number }> = {
  '24h': { buckets: 24, ms: 3_600_000, keyChars: 13 },
  '7d': { buckets: 7 * 24, ms: 3_600_000, keyChars: 13 },
  '30d': { buckets: 30, ms: 86_400_000, keyChars: 10 },
};

/** How each range is named on the page: its link, and the chart's title. */
export const RANGE_WORDS: Record<ChartRange, string> = {
  '24h': 'last 24 hours, per hour',
  '7d': 'last 7 days, per hour',
  '30d': 'last 30 days, per day',
};

/** Drawing size in SVG units; the CSS scales it to the page's width. */
export const CHART_WIDTH = 720;
export const CHART_HEIGHT = 240;
const PAD = { left: 48, right: 24, top: 12, bottom: 36 };

export interface Bucket {
  /** 'YYYY-MM-DDTHH' (per hour) or 'YYYY-MM-DD' (per day), UTC. */
  key: string;
  legacy: number;
  v1: number;
}

/** The widest range: what the page reads when the address names none, to choose one that fits the data. */
export const WIDEST_RANGE: ChartRange = '30d';

/**
 * The range the page shows when the address names none: the shortest that covers the first to the last
 * call of the last 30 days (a bot that started calling an hour ago fills 24 hourly buckets, not one pixel
 * of 168), at least a day; no call at all: the 7-day view.
 */
export function defaultRange(rows: readonly HourlyUsage[], now: Date): ChartRange {
  const hours = rows.filter((r) => r.calls > 0).map((r) => r.hour);
  if (hours.length === 0) return '7d';
  const first = hours.reduce((a, b) => (a < b ? a : b));
  return CHART_RANGES.find((range) => range !== WIDEST_RANGE && first >= rangeStartHour(range, now)) ?? WIDEST_RANGE;
}

/** The first hour ('YYYY-MM-DDTHH') the range reads from: the repo query's bound. */
export function rangeStartHour(range: ChartRange, now: Date): string {
  const first = bucketKeys(range, now)[0]!;
  return SPEC[range].keyChars === 13 ? first : `${first}T00`;
}

function bucketKeys(range: ChartRange, now: Date): string[] {
  const { buckets, ms, keyChars } = SPEC[range];
  const last = Math.floor(now.getTime() / ms) * ms;
  return Array.from({ length: buckets }, (_, i) =>
    new Date(last - (buckets - 1 - i) * ms).toISOString().slice(0, keyChars),
  );
}

/** Hours summed into the range's buckets (UTC); a bucket with no rows is zero, rows outside the range are dropped. */
export function bucketUsage(rows: readonly HourlyUsage[], range: ChartRange, now: Date): Bucket[] {
  const buckets = bucketKeys(range, now).map((key) => ({ key, legacy: 0, v1: 0 }));
  const index = new Map(buckets.map((b) => [b.key, b]));
  for (const row of rows) {
    const bucket = index.get(row.hour.slice(0, SPEC[range].keyChars));
    if (bucket) bucket[row.interface] += row.calls;
  }
  return buckets;
}

export interface ChartModel {
  range: ChartRange;
  /** Every range in words, for the links that choose one. */
  ranges: Record<ChartRange, string>;
  width: number;
  height: number;
  /** The y axis' top value: at least 1, so all-zero data draws flat lines on the base, not a division by zero. */
  max: number;
  legacy: string;
  v1: string;
  points: { key: string; label: string; x: number; legacy: number; v1: number; yLegacy: number; yV1: number }[];
  xTicks: { x: number; label: string }[];
  yTicks: { y: number; label: string }[];
  base: number;
  left: number;
  right: number;
  description: string;
}

const label = (key: string): string => (key.length > 10 ? `${key.slice(0, 10)} ${key.slice(11)}:00 UTC` : key);

/** A rounded axis top: 1, 2 or 5 times a power of ten, at least the data's maximum. */
export function niceMax(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= value)!;
}

export function chartModel(buckets: readonly Bucket[], range: ChartRange): ChartModel {
  const max = niceMax(Math.max(0, ...buckets.map((b) => Math.max(b.legacy, b.v1))));
  const plotW = CHART_WIDTH - PAD.left - PAD.right;
  const plotH = CHART_HEIGHT - PAD.top - PAD.bottom;
  const base = PAD.top + plotH;
  const step = buckets.length > 1 ? plotW / (buckets.length - 1) : 0;
  const y = (v: number): number => round(base - (v / max) * plotH);
  const points = buckets.map((b, i) => ({
    key: b.key,
    label: label(b.key),
    x: round(PAD.left + i * step),
    legacy: b.legacy,
    v1: b.v1,
    yLegacy: y(b.legacy),
    yV1: y(b.v1),
  }));
  // One label every 6 hours (24 h, the hour), per day (7 d) or per week (30 d), at the bucket where it starts.
  const every = range === '24h' ? 6 : range === '7d' ? 24 : 7;
  const tick = (key: string) => (range === '24h' ? `${key.slice(11, 13)}:00` : key.slice(5, 10));
  const xTicks = points
    .filter((_, i) => (points.length - 1 - i) % every === 0)
    .map((p) => ({ x: p.x, label: tick(p.key) }));
  const yTicks = [0, max / 2, max].map((v) => ({ y: y(v), label: String(Number.isInteger(v) ? v : v.toFixed(1)) }));
  return {
    range,
    ranges: RANGE_WORDS,
    width: CHART_WIDTH,
    height: CHART_HEIGHT,
    max,
    legacy: points.map((p) => `${p.x},${p.yLegacy}`).join(' '),
    v1: points.map((p) => `${p.x},${p.yV1}`).join(' '),
    points,
    xTicks,
    yTicks,
    base,
    left: PAD.left,
    right: CHART_WIDTH - PAD.right,
    description: describeTrend(buckets, range),
  };
}

const round = (v: number): number => Math.round(v * 10) / 10;

/** The trend in words: each interface's calls on the first and the last day of the range. */
export function describeTrend(buckets: readonly Bucket[], range: ChartRange): string {
  if (range === '24h') {
    const total = (k: 'legacy' | 'v1') => buckets.reduce((n, b) => n + b[k], 0);
    return `Over the last 24 hours, per hour: ${total('legacy')} legacy call(s) and ${total('v1')} v1 call(s) in all.`;
  }
  const perDay = range === '7d' ? 24 : 1;
  const first = buckets.slice(0, perDay);
  const last = buckets.slice(-perDay);
  const sum = (bs: readonly Bucket[], k: 'legacy' | 'v1'): number => bs.reduce((n, b) => n + b[k], 0);
  const phrase = (name: string, k: 'legacy' | 'v1'): string => {
    const a = sum(first, k);
    const b = sum(last, k);
    const verb = b < a ? 'fell' : b > a ? 'rose' : 'stayed';
    return verb === 'stayed' ? `${name} calls stayed at ${a}/day` : `${name} calls ${verb} from ${a}/day to ${b}/day`;
  };
  const span = range === '7d' ? 'the last 7 days, per hour' : 'the last 30 days, per day';
  return `Over ${span}: ${phrase('legacy', 'legacy')}; ${phrase('v1', 'v1')} (first day against the latest).`;
}
