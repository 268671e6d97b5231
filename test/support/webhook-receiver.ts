// A real webhook receiver on 127.0.0.1, port 0: it verifies every request with the Standard Webhooks
// reference library, as an endpoint's owner would, and offers the misbehaviours a sender must survive.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** What `Webhook.verify` said with the receiver's secrets: 'verified' or its error's message, per secret. */
  verdicts: string[];
}

export interface Receiver {
  origin: string;
  port: number;
  /** Every request, in order of arrival (those of /hang included, once their body is in). */
  received: Received[];
  /** TCP connections accepted, whatever came of them. */
  connections: number;
  /** Answers every request held by /hang with 200; until then they wait. */
  releaseHung(): void;
  /** Bytes /huge managed to write, and whether its connection has closed. */
  huge: { written: number; closed: Promise<void> };
  close(): Promise<void>;
}

const verdict = (secret: string, body: string, headers: Record<string, string>): string => {
  try {
    new Webhook(secret).verify(body, headers);
    return 'verified';
  } catch (error) {
    return (error as Error).message;
  }
};

/**
 * Paths: /ok verifies with the secrets and answers 204 when one of them verifies, 400 otherwise;
 * /fail answers 500 with a short body; /big-headers answers 200 with 20 KiB of headers; /hang never answers until releaseHung(); /trickle sends a 200
 * and then a byte every 100 ms, for ever; /redirect answers 307 to /target; /huge sends a 200 and
 * an endless body; /fail-times/<n> answers 500 to its first n requests, then 200; /fail-but-ping answers
 * 200 to a ping event, 500 to any other; /slow/<ms> answers as /ok after that many milliseconds (the
 * sender holds its claim meanwhile).
 */
export async function startReceiver(secrets: readonly string[] = []): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const hung: ServerResponse[] = [];
  let markHugeClosed = () => {};
  const receiver: Receiver = {
    origin: '',
    port: 0,
    received: [],
    connections: 0,
    releaseHung: () => {
      for (const response of hung.splice(0)) response.writeHead(200).end('late');
    },
    huge: { written: 0, closed: new Promise((resolve) => (markHugeClosed = resolve)) },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const handle = (request: IncomingMessage, response: ServerResponse, body: string) => {
    const path = request.url ?? '';
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
    const verdicts = secrets.map((s) => verdict(s, body, headers));
    receiver.received.push({ path, headers, body, verdicts });
    if (path === '/ok') return response.writeHead(verdicts.includes('verified') ? 204 : 400).end();
    const slow = /^\/slow\/(\d+)$/.exec(path);
    if (slow) {
      const status = verdicts.includes('verified') ? 204 : 400;
      return void setTimeout(() => response.destroyed || response.writeHead(status).end(), Number(slow[1]));
    }
    if (path === '/fail') return response.writeHead(500, { 'content-type': 'text/plain' }).end('database down');
    if (path === '/hang') return void hung.push(response);
    if (path === '/fail-but-ping') return response.writeHead(body.includes('"type":"ping"') ? 200 : 500).end();
    const failTimes = /^\/fail-times\/(\d+)$/.exec(path);
    if (failTimes) {
      const before = receiver.received.filter((r) => r.path === path).length - 1;
      return response.writeHead(before < Number(failTimes[1]) ? 500 : 200).end();
    }
    if (path === '/big-headers') return response.writeHead(200, { 'x-padding': 'p'.repeat(20 * 1024) }).end();
    if (path === '/redirect') return response.writeHead(307, { location: `${receiver.origin}/target` }).end();
    if (path === '/trickle') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 100);
      response.on('close', () => clearInterval(timer));
      return;
    }
    if (path === '/huge') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed) {
          receiver.huge.written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      response.on('close', markHugeClosed);
      return pump();
    }
    response.writeHead(200).end('ok');
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket: Socket) => {
    receiver.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.origin = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
