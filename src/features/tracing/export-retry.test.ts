import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import { describe, expect, it } from 'vitest';
import { type RetryClock, retrying } from './export-retry.js';

/** A transport answering from a script, and a clock whose waits pass at once (they only move its time). */
function harness(answers: ExportResponse[], random = 0.5) {
  let time = 0;
  const waits: number[] = [];
  const timeouts: number[] = [];
  const clock: RetryClock = {
    now: () => time,
    wait: async (ms) => {
      waits.push(ms);
      time += ms;
    },
    random: () => random,
  };
  let shutdowns = 0;
  const inner: IExporterTransport = {
    send: async (_data, timeoutMillis) => {
      timeouts.push(timeoutMillis);
      const next = answers.shift();
      if (!next) throw new Error('sent more often than scripted');
      return next;
    },
    shutdown: () => {
      shutdowns++;
    },
  };
  return { transport: retrying(inner, clock), waits, timeouts, shutdowns: () => shutdowns, left: () => answers.length };
}

const RETRY: ExportResponse = { status: 'retryable' };
const OK: ExportResponse = { status: 'success' };

describe('retrying', () => {
  it('sends once when the first answer is a success or a failure', async () => {
    for (const answer of [OK, { status: 'failure', error: new Error('400') } as ExportResponse]) {
      const h = harness([answer]);
      expect(await h.transport.send(new Uint8Array(1), 10_000)).toBe(answer);
      expect(h.waits).toEqual([]);
    }
  });

  it('retries a retryable answer five times at most, backing off 1 s × 1.5ⁿ up to 5 s', async () => {
    const h = harness([RETRY, RETRY, RETRY, RETRY, RETRY, RETRY], 0.5);
    expect(await h.transport.send(new Uint8Array(1), 60_000)).toEqual(RETRY);
    expect(h.waits).toEqual([1000, 1500, 2250, 3375, 5000]);
    expect(h.left()).toBe(0);
  });

  it('jitters each delay by up to 20 % either way', async () => {
    const low = harness([RETRY, OK], 0);
    await low.transport.send(new Uint8Array(1), 60_000);
    const high = harness([RETRY, OK], 0.999_999);
    await high.transport.send(new Uint8Array(1), 60_000);
    expect(low.waits[0]).toBe(800);
    expect(high.waits[0]).toBeCloseTo(1200, 1);
  });

  it("waits the collector's retry-after in place of the backoff, and stops at a success", async () => {
    const h = harness([{ status: 'retryable', retryInMillis: 3000 }, { status: 'retryable', retryInMillis: 0 }, OK, RETRY]);
    expect(await h.transport.send(new Uint8Array(1), 60_000)).toBe(OK);
    expect(h.waits).toEqual([3000, 0]);
    expect(h.left()).toBe(1);
  });

  it("never starts a retry past the export's timeout, and gives each retry what is left of it", async () => {
    const h = harness([RETRY, RETRY, RETRY, RETRY], 0.5);
    expect(await h.transport.send(new Uint8Array(1), 4000)).toEqual(RETRY);
    // 1000 + 1500 = 2500 ms waited; the next 2250 ms would end past 4000.
    expect(h.waits).toEqual([1000, 1500]);
    expect(h.timeouts).toEqual([4000, 3000, 1500]);
    const late = harness([{ status: 'retryable', retryInMillis: 30_000 }]);
    expect(await late.transport.send(new Uint8Array(1), 10_000)).toEqual({ status: 'retryable', retryInMillis: 30_000 });
    expect(late.waits).toEqual([]);
  });

  it('passes shutdown on', () => {
    const h = harness([]);
    h.transport.shutdown();
    expect(h.shutdowns()).toBe(1);
  });
});
