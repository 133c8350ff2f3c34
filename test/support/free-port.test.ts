import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';

describe('freePort', () => {
  it('gives a bindable port below the kernel range that outgoing connections draw from', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
    const s = createServer();
    await new Promise<void>((resolve, reject) => s.once('error', reject).listen(ports[0], '127.0.0.1', resolve));
    await new Promise((r) => s.close(r));
  });
});
