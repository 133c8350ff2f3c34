// A fake's server on an ephemeral loopback port, and its shutdown: every open connection dropped, then closed.
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Loopback {
  readonly port: number;
  /** `http://127.0.0.1:<port>` (a TLS server's callers build theirs from the port). */
  readonly origin: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<Loopback> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
