// Where a .cpuprofile's time goes: the top functions by self time, and the shares per module group.
//
//   npx tsx bench/profile.ts <file.cpuprofile> [top]
//
// Groups: node:http/net, fastify (routing, hooks, reply), zod, JSON, pino, better-sqlite3 (the native
// statements show as their JS callers' children: "(program)" and native frames are named apart), own
// code (dist/), GC, idle, other node_modules and node internals.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: bench/profile.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function group(n: Node): string {
  const { functionName: fn, url } = n.callFrame;
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'program (native, unattributed)';
  if (url.includes('better-sqlite3')) return 'better-sqlite3';
  if (url.includes('/zod')) return 'zod';
  if (url.includes('pino') || url.includes('sonic-boom') || (url.includes('fast-json-stringify') && false))
    return 'pino';
  if (
    url.includes('fastify') ||
    url.includes('find-my-way') ||
    url.includes('avvio') ||
    url.includes('light-my-request')
  )
    return 'fastify (routing, hooks, reply)';
  if (url.includes('/node_modules/')) return `other: ${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]}`;
  if (
    url.startsWith('node:_http') ||
    url.startsWith('node:http') ||
    url.startsWith('node:net') ||
    url.startsWith('node:internal/stream') ||
    url.startsWith('node:stream') ||
    url.includes('internal/js_stream')
  )
    return 'node:http/net';
  if (fn === 'parse' && url === '') return 'JSON';
  if (fn === 'stringify' && url === '') return 'JSON';
  if (url.includes('/dist/') || url.includes('/src/')) return 'own code';
  if (url === '') {
    // Native frames: attribute to the nearest caller with a url.
    let p = parent.get(n.id);
    while (p !== undefined) {
      const pn = byId.get(p)!;
      if (pn.callFrame.url.includes('better-sqlite3')) return 'better-sqlite3';
      if (pn.callFrame.url !== '') return `native under ${group(pn)}`;
      p = parent.get(p);
    }
    return 'native';
  }
  return 'node internals';
}

const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;

const fnTimes = new Map<string, number>();
const groupTimes = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  if (n.callFrame.functionName === '(idle)') continue;
  const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
  fnTimes.set(key, (fnTimes.get(key) ?? 0) + t);
  const g = group(n);
  groupTimes.set(g, (groupTimes.get(g) ?? 0) + t);
}
console.log(
  `${file}: ${(busy / 1000).toFixed(0)} ms busy (idle ${(idle / 1000).toFixed(0)} ms left out); shares of the busy time`,
);
console.log('\nby module:');
for (const [g, t] of [...groupTimes].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(t)}  ${g}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [f, t] of [...fnTimes].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${f}`);
