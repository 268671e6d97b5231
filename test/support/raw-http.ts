// Raw HTTP/1.1 over a net socket: for requests a client library would refuse to send, and for
// clients that trickle, withhold or never send their request.
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote, as received. */
  raw: string;
}

export interface RawConnection {
  socket: net.Socket;
  /** Resolves when the server (or the deadline) closes the connection: what it wrote, and when. */
  closed: Promise<{ raw: string; afterMs: number; byServer: boolean }>;
  /** Writes `chunk` every `everyMs` until the connection closes. */
  trickle(chunk: string, everyMs: number): void;
}

/** Opens a connection and writes `first` (if any) once connected; `deadlineMs` ends a connection the server never closes. */
export function openRaw(port: number, first: string | null, deadlineMs: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let raw = '';
    let byServer = true;
    const deadline = setTimeout(() => {
      byServer = false;
      socket.destroy();
    }, deadlineMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (raw += d));
    socket.on('error', () => {}); // a reset after the server's answer is a close like any other
    const closed = new Promise<{ raw: string; afterMs: number; byServer: boolean }>((done) =>
      socket.on('close', () => {
        clearTimeout(deadline);
        done({ raw, afterMs: Date.now() - started, byServer });
      }),
    );
    socket.once('connect', () => {
      if (first !== null) socket.write(first);
      resolve({
        socket,
        closed,
        trickle(chunk, everyMs) {
          const timer = setInterval(() => {
            if (socket.writable) socket.write(chunk);
          }, everyMs);
          socket.on('close', () => clearInterval(timer));
        },
      });
    });
    socket.once('error', reject);
  });
}

/** Sends one request (with `Connection: close` unless it says otherwise) and parses the answer. */
export async function rawRequest(port: number, request: string, deadlineMs = 5_000): Promise<RawResponse> {
  const conn = await openRaw(port, request, deadlineMs);
  const { raw } = await conn.closed;
  const parsed = parseResponse(raw);
  if (!parsed) throw new Error(`no HTTP response to ${JSON.stringify(request.slice(0, 80))}: ${JSON.stringify(raw)}`);
  return parsed;
}

/** The first response in `raw`, or null when there is none. */
export function parseResponse(raw: string): RawResponse | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const rest = raw.slice(end + 4);
  return { status, headers, body: length === undefined ? rest : rest.slice(0, length), raw };
}
