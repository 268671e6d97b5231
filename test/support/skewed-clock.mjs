// A replica whose clock is off by TEST_CLOCK_SKEW_MS (positive: ahead), for the process tests of
// clock skew between replicas (docs/testing.md): preloaded with `node --import` (skewedClock() in
// child-gateway.ts), it shifts Date.now() and `new Date()` of the whole process, as a machine clock
// set wrong would. Timers and performance.now() keep their pace: only the time of day moves.
import process from 'node:process';

const skew = Number(process.env.TEST_CLOCK_SKEW_MS ?? 0);
if (!Number.isFinite(skew)) throw new Error(`TEST_CLOCK_SKEW_MS is not a number: ${process.env.TEST_CLOCK_SKEW_MS}`);
const RealDate = Date;
const now = () => RealDate.now() + skew;
globalThis.Date = new Proxy(RealDate, {
  construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [now()] : args, newTarget),
  apply: () => new RealDate(now()).toString(),
  get: (target, property, receiver) => (property === 'now' ? now : Reflect.get(target, property, receiver)),
});
