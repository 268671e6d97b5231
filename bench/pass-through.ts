// The legacy pass-through alone: gateway CPU per forwarded GET against the bare proxies, in one run.
//
//   npm run build && npx tsx bench/pass-through.ts
//
// Starts bench/servers.ts's upstream, the built gateway in front of it (a legacy key imported), the bare
// @fastify/reply-from and undici `stream` proxies in front of the same upstream, then runs wrk at 32
// connections on each in turn, ROUNDS times, alternating, and prints the medians of CPU us per request
// (process CPU / requests answered; the machine is shared, so req/s alone says little).
//   ROUNDS=5 SECONDS=5       rounds and seconds per measured run
//   COMPARE=<dir>            also a second build of the gateway (<dir>/dist/main.js, e.g. an earlier commit
//                            built with node_modules linked beside it), measured in the same rounds
//   PROFILE=<dir>            run the gateway under --cpu-prof, profiles written to <dir> at exit
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, median } from './measure.js';
import { generate } from './load.js';
import { CHILD_ADMIN_TOKEN, ROOT, postJson, spawnGateway } from '../test/support/child-gateway.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = Number(process.env.SECONDS ?? 5);
const CONNECTIONS = 32;
const WARMUP_S = 2;
const LEGACY_KEY = 'bench-pass-through-legacy-key-0001';
const PATH = '/api/bots/api/employees/';

interface Target {
  name: string;
  address: string;
  pid: number;
  stop: () => void;
}

/**
 * A server that prints `listening <url>` (bench/servers.ts) or the gateway's pino line. Its output is
 * read and dropped from then on: a gateway logs a line per request, and keeping them all (searched
 * again at every chunk) took this process CPU that grew with the run, on the cores the measured
 * servers share.
 */
function started(child: ChildProcess, name: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let seen = '';
    let listening = false;
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${seen}`)));
    const onData = (chunk: Buffer) => {
      if (listening) return;
      seen += chunk.toString();
      const m =
        /listening (http\S+)/.exec(seen) ?? /"address":"(http:\/\/[^"]+)".*"msg":"lead-gateway listening"/.exec(seen);
      if (m) {
        listening = true;
        seen = '';
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
}

async function reference(mode: 'upstream' | 'proxy' | 'undici', upstream?: string): Promise<Target> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'servers.ts'), mode, ...(upstream ? [upstream] : [])],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const address = await started(child, mode);
  return {
    name: mode === 'proxy' ? 'bare reply-from' : mode === 'undici' ? 'bare undici stream' : mode,
    address,
    pid: child.pid!,
    stop: () => child.kill('SIGTERM'),
  };
}

function gatewayEnv(upstream: string): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-pass-bench-'));
  return { DATABASE_PATH: join(dir, 'gateway.db'), LEGACY_UPSTREAM_URL: upstream, RATE_LIMIT_PER_MINUTE: '1000000' };
}

async function gateway(name: string, upstream: string, build?: string): Promise<Target> {
  const nodeArgs = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
  let target: Target;
  if (build === undefined) {
    const gw = await spawnGateway({ entry: 'dist', env: gatewayEnv(upstream), nodeArgs });
    target = { name, address: gw.address, pid: gw.pid, stop: () => void gw.stop() };
  } else {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: '0',
      RULES_DIR: join(ROOT, 'rules'),
      ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      ...gatewayEnv(upstream),
    };
    const child = spawn(process.execPath, [...nodeArgs, join(build, 'dist', 'main.js')], {
      cwd: build,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    target = { name, address: await started(child, name), pid: child.pid!, stop: () => child.kill('SIGTERM') };
  }
  const imported = await postJson(
    `${target.address}/admin/v1/integrations/brightpath:telegram-bot/keys/import`,
    { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
    { key: LEGACY_KEY },
  );
  if (imported.status >= 300)
    throw new Error(`importing the legacy key: ${imported.status} ${JSON.stringify(imported.body)}`);
  return target;
}

async function run(target: Target): Promise<{ cpu: number; rps: number; errors: number }> {
  const load = { url: `${target.address}${PATH}`, headers: { 'x-bot-api-key': LEGACY_KEY } };
  const before = cpuMicros(target.pid);
  const result = await generate(load, CONNECTIONS, SECONDS);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const used = cpuMicros(target.pid) - before;
  return { cpu: Math.round(used / result.requests), rps: result.rps, errors: result.errors + result.non_2xx };
}

const upstream = await reference('upstream');
const targets: Target[] = [await gateway('gateway', upstream.address)];
if (process.env.COMPARE)
  targets.push(await gateway(`gateway (${process.env.COMPARE})`, upstream.address, process.env.COMPARE));
targets.push(await reference('proxy', upstream.address), await reference('undici', upstream.address));
try {
  for (const t of targets)
    await generate({ url: `${t.address}${PATH}`, headers: { 'x-bot-api-key': LEGACY_KEY } }, CONNECTIONS, WARMUP_S);
  const figures = new Map<string, { cpu: number; rps: number; errors: number }[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so no target always runs right after the same neighbour.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) figures.get(t.name)!.push(await run(t));
    console.error(`round ${round + 1}: ${[...figures].map(([n, f]) => `${n} ${f.at(-1)!.cpu} us`).join(', ')}`);
  }
  console.log(`CPU us per forwarded GET, medians of ${ROUNDS} rounds of ${SECONDS} s at ${CONNECTIONS} connections:`);
  for (const [name, f] of figures) {
    console.log(
      `  ${name.padEnd(40)} ${String(median(f.map((x) => x.cpu))).padStart(5)} us  ${String(median(f.map((x) => x.rps))).padStart(6)} req/s  errors ${f.reduce((s, x) => s + x.errors, 0)}  (runs: ${f.map((x) => x.cpu).join(' ')})`,
    );
  }
} finally {
  for (const t of [...targets, upstream]) t.stop();
}
