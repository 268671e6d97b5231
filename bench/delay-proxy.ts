// A TCP relay that holds every chunk for a fixed time in each direction: a stand-in for the network
// between a gateway and a PostgreSQL primary in another rack or zone (this machine's kernel has no
// netem). Chunks keep their order: Node runs timers of one duration first in, first out.
//   delay-proxy.ts <target-host> <target-port> <one-way delay ms>
import { connect, createServer, type Socket } from 'node:net';

const [host, port, delayArg] = process.argv.slice(2);
const delay = Number(delayArg);
if (!host || !port || !Number.isFinite(delay)) {
  console.error('usage: delay-proxy.ts <target-host> <target-port> <one-way delay ms>');
  process.exit(2);
}

/** Sends what `from` receives to `to`, `delay` ms later; an end or error on either side closes both. */
function relay(from: Socket, to: Socket): void {
  from.on('data', (chunk) => {
    if (delay > 0) setTimeout(() => to.write(chunk), delay);
    else to.write(chunk);
  });
  from.on('end', () => setTimeout(() => to.end(), delay));
  from.on('error', () => to.destroy());
}

const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect({ host, port: Number(port), noDelay: true });
  relay(client, upstream);
  relay(upstream, client);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`);
});
process.on('SIGTERM', () => process.exit(0));
