import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { attachExchange, Exchange, type Routed } from '../../dataplane/exchange/exchange.js';
import type { Answer } from '../../dataplane/exchange/transform.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { Tracing } from './tracing.js';
import { tracingConfig } from './tracing-config.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const BACKEND = { name: 'b', id: 'ns/r/b', model: 'm', origin: 'http://127.0.0.1:9' } as unknown as CompiledBackend;

let tracing: Tracing | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  tracing = undefined;
});

/** One request through the middleware, with the client's traceparent (sampled or not): its exchange. */
function request(sampler: string, sampled: boolean): Exchange {
  // Nothing is exported: the endpoint only turns tracing on.
  tracing = new Tracing(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: sampler })!, { version: 'test' });
  const res = Object.assign(new EventEmitter(), { writableFinished: false, locals: {} }) as unknown as Response;
  const x = new Exchange('r1', res);
  attachExchange(res, x);
  const headers = { traceparent: `00-${TRACE}-${PARENT}-${sampled ? '01' : '00'}`, tracestate: 'vendor=abc' };
  tracing.middleware({ path: '/v1/chat/completions', method: 'POST', headers } as unknown as Request, res, () => {});
  return x;
}

const answer = (x: Exchange): Answer =>
  ({ exchange: x as Routed, backend: BACKEND, statusCode: 200, headers: {}, contentType: 'text/event-stream', isStream: true, progress: undefined }) as Answer;

describe('an unsampled request', () => {
  it('gets no answer observer and no exemplar, and tells the upstream its trace, not sampled, under a span of the gateway', () => {
    const x = request('parentbased_always_on', false);
    expect(x.trace).toMatchObject({ traceId: TRACE, exemplarId: undefined });
    expect(tracing!.transform.onResponseStart!(answer(x))).toBeUndefined();
    const attempt = x.trace!.attempt(BACKEND, 1, '/v1/chat/completions', undefined);
    const headers: Record<string, string | string[]> = { traceparent: 'from the client', tracestate: 'vendor=abc' };
    attempt.inject(headers);
    const [, trace, parent, flags] = String(headers.traceparent).split('-');
    expect({ trace, flags, tracestate: headers.tracestate }).toEqual({ trace: TRACE, flags: '00', tracestate: 'vendor=abc' });
    expect(parent).toMatch(/^[0-9a-f]{16}$/);
    expect(parent).not.toBe(PARENT);
  });

  it('unlike a sampled one, whose answer is observed and whose trace id becomes an exemplar', () => {
    const x = request('parentbased_always_on', true);
    expect(x.trace).toMatchObject({ traceId: TRACE, exemplarId: TRACE });
    expect(tracing!.transform.onResponseStart!(answer(x))).toBeDefined();
  });
});
