// A fake egress proxy, as a cluster without direct internet access has one: CONNECT tunnels (https, and whatever a
// client tunnels) and absolute-form requests (plain http through HTTP_PROXY), each to a host:port the test maps to a
// loopback port, so public names (oauth2.googleapis.com:443) reach loopback fakes only through it. Anything else
// is refused, and everything is recorded: what went through the proxy, and so what did not.
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { listenOnLoopback } from './loopback.js';

export interface EgressProxy {
  /** For HTTPS_PROXY / HTTP_PROXY. */
  readonly url: string;
  /** host:port of every CONNECT and of every absolute-form request, in order (refused ones included). */
  readonly seen: string[];
  close(): Promise<void>;
}

/** `routes`: host:port as the client asks for it → the loopback port it is sent to. */
export async function startEgressProxy(routes: Readonly<Record<string, number>>): Promise<EgressProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  // Plain http: the request line names the whole URL (absolute form), forwarded as an origin-form request.
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = URL.canParse(req.url ?? '') ? new URL(req.url ?? '') : undefined;
    const target = url ? `${url.hostname}:${url.port || '80'}` : '';
    seen.push(target);
    const port = routes[target];
    if (url === undefined || port === undefined) return void res.writeHead(403).end();
    const out = request({ host: '127.0.0.1', port, method: req.method, path: url.pathname + url.search, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    seen.push(target);
    client.on('error', () => client.destroy());
    const port = routes[target];
    if (port === undefined) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => client.destroy());
  });
  const loop = await listenOnLoopback(server);
  return {
    url: loop.origin,
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await loop.close();
    },
  };
}
