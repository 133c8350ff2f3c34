// A misbehaving upstream on 127.0.0.1 that speaks raw TCP, so it can send what no HTTP library would: wrong
// lengths, resets mid-body, oversized or invalid headers, informational responses. The first path segment
// picks the behaviour: POST /<name>/v1/... → behaviours[name](socket) once the whole request is in, or
// early[name](socket) as soon as its head is (the body unread: an upstream that answers before reading it).
import { once } from 'node:events';
import net from 'node:net';

export type Behaviour = (socket: net.Socket) => void;

export interface RawUpstream {
  /** Base URL for a backend that behaves as `name`. */
  baseURL(name: string): string;
  /** Requests that reached the behaviour `name` so far. */
  requests(name: string): number;
  close(): Promise<void>;
}

export async function startRawUpstream(behaviours: Record<string, Behaviour>, early: Record<string, Behaviour> = {}): Promise<RawUpstream> {
  const sockets = new Set<net.Socket>();
  const counts = new Map<string, number>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = buffered.subarray(0, headEnd).toString('latin1');
      const name = /^\w+ \/([\w-]+)\//.exec(head)?.[1] ?? '';
      const answerEarly = early[name];
      if (answerEarly) {
        socket.off('data', onData);
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return answerEarly(socket);
      }
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < headEnd + 4 + length) return;
      buffered = buffered.subarray(headEnd + 4 + length);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      const behaviour = behaviours[name];
      if (behaviour) behaviour(socket);
      else socket.destroy();
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    baseURL: (name) => `http://127.0.0.1:${port}/${name}/v1`,
    requests: (name) => counts.get(name) ?? 0,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A complete HTTP/1.1 response with a correct content-length. */
export function response(status: string, headers: Record<string, string>, body = ''): string {
  const lines = [`HTTP/1.1 ${status}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
