// Ports for tests and benchmarks that must choose a port before starting a process on it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The first port of the kernel's ephemeral range. A port that `listen(0)` handed out comes from this range, and
 * so does the local port of every outgoing connection: between our probe and the child's listen, any client
 * socket on the machine may take it (CI once failed on exactly that, EADDRINUSE). Ports below the range are
 * never given to client sockets, so only another caller of `freePort` could pick the same one.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // Not Linux: fall through to IANA's dynamic range start, which macOS and Windows use.
  }
  return 49_152;
}

const LOW = 10_000;
const HIGH = ephemeralLow() - 1;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that was free a moment ago and that no outgoing connection will take meanwhile. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${LOW} and ${HIGH} in 100 tries`);
}
