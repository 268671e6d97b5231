// The load generator of the bench: wrk from the OS packages when the machine has it (its own process,
// a few microseconds of CPU per request, so it does not cap the baseline), else autocannon in this
// process (said in the report). A scenario's bodies are one JSON template for both: `{i}` is the
// request's number (unique across wrk's threads), `{i+B}` is i + B, `{i%N}` and `{i%N+B}` are
// (i mod N) and (i mod N) + B, and `{i%N:a|b}` picks by i mod N among the words.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { spawnOwned } from '../test/support/owned.js';

export interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** The JSON body with placeholders (see above). */
  body?: string;
  /** Where `i` starts: scenarios on one database keep their numbers apart with it. */
  offset?: number;
  /** Run this many requests instead of for the scenario's duration. */
  amount?: number;
}

export interface Generated {
  /** Requests answered. */
  requests: number;
  /**
   * Requests the run sent, the divisor of every per-request cost: also those still in flight when the
   * run ended, which the server processes all the same (they are never answered).
   */
  sent: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Answers with a status of 400 or more. */
  non_2xx: number;
}

/** wrk's threads: one per core of these machines; its connections are spread over them. */
const WRK_THREADS = 2;
/**
 * How long each wrk connection waits before its first request. Node accepts one new connection per
 * turn of its event loop (libuv 1.45, Node 20), so 32 connections opened at once against a gateway
 * already busy with the first ones' requests are accepted one per busy turn: the last one's first
 * request waits in the kernel all that while, and a short run's p99 reports this ramp rather than the
 * steady load (bench/results/LOG.md, "The p99 of a run"). Waiting this long first, every connection is
 * accepted by an idle server before any load starts; the run's rate is counted from then on.
 */
export const PRIME_MS = 100;
/** The longest a run of `amount` requests may take. */
const AMOUNT_LIMIT_S = 900;
const PLACEHOLDER = /\{i(?:%(\d+))?(?:\+(\d+)|:([^}]*))?\}/g;

/** The body of request `i`, as the Lua script computes it in wrk. */
export function bodyOf(template: string, i: number): string {
  return template.replace(PLACEHOLDER, (_all, mod?: string, add?: string, words?: string) => {
    const m = mod === undefined ? i : i % Number(mod);
    return words !== undefined ? words.split('|')[m]! : String(m + Number(add ?? 0));
  });
}

let wrkPath: string | null | undefined;
/** wrk's path, or null (the bench then uses autocannon). */
export function wrkBinary(): string | null {
  if (wrkPath === undefined)
    wrkPath = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim() || null;
  return wrkPath;
}

export const generatorName = () =>
  wrkBinary()
    ? `wrk (${WRK_THREADS} threads, its own process; each connection accepted before the load starts)`
    : 'autocannon in the bench process (wrk not installed: apt-get install wrk)';

const luaString = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The Lua script wrk runs: the method, headers and body of every request, the limit, and a JSON summary. */
function luaScript(load: Load, threads: number, connectionsPerThread: number): string {
  const headers = Object.entries({
    ...(load.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...load.headers,
  })
    .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
    .join('\n');
  return `
wrk.method = ${luaString(load.method ?? (load.body !== undefined ? 'POST' : 'GET'))}
${headers}
local template = ${load.body !== undefined ? luaString(load.body) : 'nil'}
local offset = ${load.offset ?? 0}
local threads = ${threads}
local limit = ${load.amount !== undefined ? Math.ceil(load.amount / threads) : -1}
-- A global, so that done() can read it from each thread.
counter = -1
local next_id = 0
local done_here = 0
local all_threads = {}
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(all_threads, thread)
end
local function expand(i)
  return (template:gsub("{i([^}]*)}", function(spec)
    local m, rest = i, spec
    local mod, after = spec:match("^%%(%d+)(.*)$")
    if mod then m, rest = i % tonumber(mod), after end
    if rest == "" then return tostring(m) end
    if rest:sub(1, 1) == "+" then return tostring(m + tonumber(rest:sub(2))) end
    local k = 0
    for word in (rest:sub(2) .. "|"):gmatch("([^|]*)|") do
      if k == m then return word end
      k = k + 1
    end
    return ""
  end))
end
-- The first request of each of this thread's connections waits PRIME_MS, the others none (bench/load.ts).
local unprimed = ${connectionsPerThread}
function delay()
  if unprimed > 0 then
    unprimed = unprimed - 1
    return ${PRIME_MS}
  end
  return 0
end
function request()
  counter = counter + 1
  if template == nil then return wrk.format() end
  return wrk.format(nil, nil, nil, expand(offset + counter * threads + id))
end
function response(status, headers, body)
  done_here = done_here + 1
  if limit >= 0 and done_here == limit then
    -- wrk waits out its duration even when every thread has stopped: the bench interrupts it on these lines.
    io.write("thread done\\n")
    io.flush()
    wrk.thread:stop()
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  -- wrk calls request() right before it writes one: the numbers given out are the requests sent.
  local sent = 0
  for _, thread in ipairs(all_threads) do sent = sent + thread:get("counter") + 1 end
  io.write(string.format('{"requests":%d,"sent":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, sent, summary.duration, latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))
end
`;
}

async function runWrk(wrk: string, load: Load, connections: number, seconds: number): Promise<Generated> {
  const threads = Math.min(WRK_THREADS, connections);
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    // wrk gives each thread connections / threads of them.
    writeFileSync(script, luaScript(load, threads, Math.floor(connections / threads)));
    const duration = load.amount !== undefined ? AMOUNT_LIMIT_S : seconds;
    // Owned: killed with the test (or script) that runs it, should it hang (test/support/owned.ts).
    const child = spawnOwned(
      wrk,
      [
        '-t',
        String(threads),
        '-c',
        String(connections),
        '-d',
        `${duration}s`,
        '--timeout',
        '10s',
        '-s',
        script,
        load.url,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    let stopped = 0;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      stopped += chunk.split('thread done').length - 1;
      // Every thread sent its share of `amount`: SIGINT makes wrk stop and print its summary.
      if (stopped === threads) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0 && !stdout.includes('{"requests"')) throw new Error(`wrk exited with ${code}`);
    // wrk's own summary and the script's line share stdout, in no fixed order.
    const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
    if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
    const s = JSON.parse(line) as Record<string, number>;
    // No request is sent while the connections wait to be accepted.
    const secondsTaken = Math.max(s.duration_us! / 1e6 - PRIME_MS / 1000, 0.001);
    return {
      requests: s.requests!,
      sent: s.sent!,
      rps: Math.round(s.requests! / secondsTaken),
      p50_ms: Math.round(s.p50_us! / 100) / 10,
      p99_ms: Math.round(s.p99_us! / 100) / 10,
      errors: s.connect! + s.read! + s.write! + s.timeout!,
      non_2xx: s.status!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(load: Load, connections: number, seconds: number): Promise<Generated> {
  let counter = 0;
  const template = load.body;
  const result = await autocannon({
    url: load.url,
    connections,
    ...(load.amount !== undefined ? { amount: load.amount } : { duration: seconds }),
    requests: [
      {
        method: load.method ?? (template !== undefined ? 'POST' : 'GET'),
        headers: { ...(template !== undefined ? { 'content-type': 'application/json' } : {}), ...load.headers },
        ...(template !== undefined
          ? {
              setupRequest: (req: autocannon.Request) => ({
                ...req,
                body: bodyOf(template, (load.offset ?? 0) + counter++),
              }),
            }
          : {}),
      },
    ],
  });
  return {
    requests: result.requests.total,
    sent: result.requests.sent,
    rps: Math.round(result.requests.total / (result.duration || 1)),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non_2xx: result.non2xx,
  };
}

/** Sends `load` at `connections` for `seconds` (or its `amount`), and answers what the generator saw. */
export function generate(load: Load, connections: number, seconds: number): Promise<Generated> {
  const wrk = wrkBinary();
  return wrk ? runWrk(wrk, load, connections, seconds) : runAutocannon(load, connections, seconds);
}
