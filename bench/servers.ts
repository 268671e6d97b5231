// Reference servers for the benchmarks, each run as its own process:
//   echo      a plain Fastify JSON echo, the baseline every gateway figure is a ratio of;
//   upstream  a stand-in for the legacy bot API that the gateway's pass-through forwards to;
//   proxy <upstream-url>  a bare Fastify + @fastify/reply-from proxy to it: what forwarding alone
//             costs on this machine, the ceiling for the gateway's pass-through figure;
//   undici <upstream-url> a bare node:http server forwarding with undici's `stream`: the least a
//             forward costs in Node, without Fastify or reply-from.
import { createServer } from 'node:http';
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';
import { Agent, stream } from 'undici';

const mode = process.argv[2];
const app = Fastify({ logger: false });

if (mode === 'echo') {
  app.post('/echo', async (request, reply) => reply.code(201).send(request.body));
} else if (mode === 'upstream') {
  const employees = Array.from({ length: 5 }, (_, i) => ({
    id: `emp-${i}`,
    username: `employee${i}`,
    first_name: 'Employee',
    last_name: String(i),
  }));
  app.get('/api/bots/api/employees/', async () => employees);
} else if (mode === 'proxy' && process.argv[3]) {
  await app.register(replyFrom, { base: process.argv[3], retryMethods: [], disableRequestLogging: true });
  app.get('/api/bots/api/employees/', (request, reply) => reply.from(request.url, { retriesCount: 0 }));
} else if (mode === 'undici' && process.argv[3]) {
  const base = process.argv[3];
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const server = createServer((req, res) => {
    stream(`${base}${req.url}`, { method: 'GET', dispatcher: agent }, ({ statusCode, headers }) => {
      res.writeHead(statusCode, { 'content-type': String(headers['content-type'] ?? 'application/json') });
      return res;
    }).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });
  server.listen(0, '127.0.0.1', () =>
    console.log(`listening http://127.0.0.1:${(server.address() as { port: number }).port}`),
  );
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  console.error('usage: servers.ts echo|upstream|proxy <upstream-url>|undici <upstream-url>');
  process.exit(2);
}

if (mode !== 'undici') {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`listening ${address}`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
