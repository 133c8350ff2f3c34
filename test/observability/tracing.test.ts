// Traces end to end: the gateway (tracing on, OTLP/HTTP with the JSON encoding) in front of fake upstreams, the
// official openai SDK as the client, and a loopback OTLP receiver that decodes what the exporter sends. Checks
// the spans, their parents across the client → gateway → upstream hops, the GenAI and gateway attributes,
// failover attempts, a stream cut mid-way, sampling, exemplars, the access log, and that no secret is in a span.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { tracingWith } from '../helpers/tracing.js';
import { metricsHandler } from '../../src/dataplane/server/metrics-handler.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startFaultyUpstream, type FaultyUpstream } from '../fakes/faulty-upstream.js';
import { startOtlpReceiver, type OtlpReceiver, type OtlpReceiverOptions, type ReceivedSpan } from '../fakes/otlp-receiver.js';
import { selfSignedCert } from '../support/tls-cert.js';
import { canary, expectNoLeaks } from '../hardening/canary.js';
import { waitUntil } from '../support/wait.js';

const CLIENT_KEY = canary('client');
const PRIMARY_KEY = canary('primary-upstream');
const BACKUP_KEY = canary('backup-upstream');
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

function manifests(primary: string, backup: string): string {
  return `
apiVersion: v1
kind: Secret
metadata: {name: keys, namespace: team-ns}
stringData: {client: ${CLIENT_KEY.value}, primary: ${PRIMARY_KEY.value}, backup: ${BACKUP_KEY.value}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat, namespace: team-ns}
spec:
  model: gpt-4o-mini
  backends:
  - {name: primary, baseURL: "${primary}", apiKeySecretRef: {name: keys, key: primary}, model: upstream-a, priority: 0}
  - {name: backup, baseURL: "${backup}", apiKeySecretRef: {name: keys, key: backup}, model: upstream-b, priority: 1}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team-a, namespace: team-ns}
spec: {models: [gpt-4o-mini]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice, namespace: team-ns}
spec: {group: team-a, secretRef: {name: keys, key: client}}
`;
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';

function traceparent(traceId: string, parent: string, sampled: boolean): string {
  return `00-${traceId}-${parent}-${sampled ? '01' : '00'}`;
}

/** A chat stream request in a trace the client sampled (TRACE, the child of PARENT). */
function sampledStream(gw: TestGateway) {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'x' }], stream: true as const };
  return gw.client(CLIENT_KEY.value).chat.completions.create(body, { headers: { traceparent: traceparent(TRACE, PARENT, true) } });
}

/** traceparent → its parts. */
function parseTraceparent(v: unknown): { traceId: string; parentId: string; sampled: boolean } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(v));
  if (!m) throw new Error(`not a traceparent: ${String(v)}`);
  return { traceId: m[1]!, parentId: m[2]!, sampled: (Number.parseInt(m[3]!, 16) & 1) === 1 };
}

describe('traces', () => {
  let primary: FaultyUpstream;
  let backup: FaultyUpstream;
  let receiver: OtlpReceiver;
  let gateway: TestGateway | undefined;
  let tracing: Tracing | undefined;

  beforeAll(async () => {
    primary = await startFaultyUpstream('primary');
    backup = await startFaultyUpstream('backup');
  });
  afterAll(async () => {
    await primary.close();
    await backup.close();
  });
  afterEach(async () => {
    await gateway?.close();
    await tracing?.shutdown();
    await receiver?.close();
    gateway = undefined;
    tracing = undefined;
    primary.setFault({ kind: 'ok' });
    backup.setFault({ kind: 'ok' });
    primary.requests.length = 0;
    backup.requests.length = 0;
  });

  async function start(
    env: Record<string, string> = {},
    o: { content?: boolean; primary?: string; receiver?: OtlpReceiverOptions } = {},
  ): Promise<TestGateway> {
    receiver = await startOtlpReceiver(o.receiver);
    tracing = tracingWith(receiver, env, o.content);
    gateway = await startGateway(manifests(o.primary ?? primary.baseURL, backup.baseURL), { tracing });
    return gateway;
  }

  /** The spans of one trace once `count` of them arrived. */
  async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
    await waitUntil(() => receiver.spans.filter((s) => s.traceId === traceId).length >= count, 5_000, `${count} spans of trace ${traceId}`);
    return receiver.spans.filter((s) => s.traceId === traceId);
  }

  it("joins the client's trace: a server span under the client's span, an attempt span under it, the upstream under that", async () => {
    const gw = await start();
    const client = gw.client(CLIENT_KEY.value);
    const answer = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      { headers: { traceparent: traceparent(TRACE, PARENT, true), tracestate: 'vendor=abc' } },
    );
    expect(answer.choices[0]!.message.content).toBe('from primary');

    const spans = await spansOf(TRACE, 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    expect(server.parentSpanId).toBe(PARENT);
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.traceState).toBe('vendor=abc');
    expect(attempt.parentSpanId).toBe(server.spanId);
    expect(attempt.name).toBe('chat upstream-a');

    // The upstream's parent is the attempt span, in the same trace, with the client's tracestate.
    const sent = primary.requests[0]!.headers;
    expect(parseTraceparent(sent.traceparent)).toEqual({ traceId: TRACE, parentId: attempt.spanId, sampled: true });
    expect(sent.tracestate).toBe('vendor=abc');

    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'url.path': '/v1/chat/completions',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.provider.name': 'openai',
      'gen_ai.response.model': 'upstream-a',
      'gen_ai.usage.input_tokens': 1,
      'gen_ai.usage.output_tokens': 2,
      'model_gateway.group': 'team-a',
      'model_gateway.token.namespace': 'team-ns',
      'model_gateway.token.name': 'alice',
      'model_gateway.backend': 'primary',
      'model_gateway.attempts': 1,
    });
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      // Required on GenAI client spans: a backend on a host of its own speaks the OpenAI API.
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'upstream-a',
      'gen_ai.response.model': 'upstream-a',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': primary.port,
      'url.full': `http://127.0.0.1:${primary.port}/v1/chat/completions`,
      'model_gateway.backend': 'primary',
      'model_gateway.backend.id': 'team-ns/chat/primary',
      'model_gateway.attempt': 1,
    });
    // Not a stream: no time to a first chunk.
    expect(server.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined();
    expect(attempt.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined();
    expect(server.resource).toMatchObject({ 'service.name': 'gateway-under-test', 'service.version': 'test', 'deployment.environment.name': 'test' });
    // What an OpenTelemetry SDK says of itself on every resource.
    expect(server.resource).toMatchObject({
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.version': expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(attempt.resource).toEqual(server.resource);
    // The exporter sent the configured headers (OTEL_EXPORTER_OTLP_HEADERS) to /v1/traces, in protobuf (the default
    // protocol), which the receiver decoded with the official definitions.
    expect(receiver.requests[0]).toMatchObject({ path: '/v1/traces', headers: { 'x-collector-tenant': 'team-a' }, contentType: 'application/x-protobuf' });

    // The access-log line names the trace.
    const line = await waitUntil(() => gw.logs.find((l) => l.msg === 'request'), 2_000, 'the access log line');
    expect(line.traceId).toBe(TRACE);
    // No prompt or completion content, and no key, in anything exported.
    expect(receiver.rawText()).not.toContain('hello');
    expect(receiver.rawText()).not.toContain('from primary');
    expectNoLeaks({ 'exported spans': receiver.rawText(), 'upstream request headers': JSON.stringify(sent.traceparent) }, [
      CLIENT_KEY,
      PRIMARY_KEY,
      BACKUP_KEY,
    ]);
  });

  it('exports OTLP/JSON instead with OTEL_EXPORTER_OTLP_PROTOCOL=http/json', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    await waitUntil(() => receiver.spans.length >= 2, 5_000, 'two spans');
    expect(receiver.requests.every((r) => r.contentType.startsWith('application/json'))).toBe(true);
    expect(receiver.spans.map((s) => s.kind).sort()).toEqual([2, 3]);
  });

  it('exports gzip-compressed over https to a collector trusted by OTEL_EXPORTER_OTLP_CERTIFICATE, with a client certificate', async () => {
    const server = selfSignedCert(['127.0.0.1']);
    const client = selfSignedCert(['gateway-client']);
    const dir = mkdtempSync(join(tmpdir(), 'mg-otlp-tls-'));
    try {
      const file = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      const gw = await start(
        {
          OTEL_EXPORTER_OTLP_CERTIFICATE: file('ca.pem', server.cert),
          OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: file('client.pem', client.cert),
          OTEL_EXPORTER_OTLP_CLIENT_KEY: file('client-key.pem', client.key),
          OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        },
        { receiver: { tls: { ...server, clientCa: client.cert } } },
      );
      expect(receiver.endpoint).toMatch(/^https:/);
      await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
      await waitUntil(() => receiver.spans.length >= 2, 5_000, 'two spans');
      expect(receiver.spans.map((s) => s.kind).sort()).toEqual([2, 3]);
      for (const r of receiver.requests) {
        expect(r.compressed?.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
        expect(r.clientCertificate).toBe('gateway-client');
        expect(r.headers['x-collector-tenant']).toBe('team-a');
        expect(r.headers['content-type']).toBe('application/x-protobuf');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends a batch again after the collector answers 503, until it takes it', async () => {
    const gw = await start({}, { receiver: { busyFirst: 2 } });
    await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    await waitUntil(() => receiver.spans.length >= 2, 5_000, 'two spans');
    const [first, second, third] = receiver.requests;
    expect(Buffer.compare(first!.body, second!.body)).toBe(0);
    expect(Buffer.compare(first!.body, third!.body)).toBe(0);
    expect(receiver.spans.map((s) => s.kind).sort()).toEqual([2, 3]);
    // Both spans exported, in the end (counted once the exporter has the collector's answer); none failed.
    const text = await waitUntil(async () => {
      const t = await gw.metrics.registry.metrics();
      return /^model_gateway_trace_spans_exported_total 2$/m.test(t) && t;
    });
    expect(text).toMatch(/^model_gateway_trace_spans_failed_total 0$/m);
  });

  it('counts the spans of a collector that refuses every batch, and says so in one log line per window', async () => {
    const gw = await start({}, { receiver: { refuseWith: 400 } });
    const failed = async () => Number(/^model_gateway_trace_spans_failed_total (\d+)$/m.exec(await gw.metrics.registry.metrics())?.[1] ?? -1);
    const warnings = () => gw.logs.filter((l) => String(l.msg).startsWith('trace export failed'));
    const ask = () => gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });

    await ask();
    await waitUntil(async () => (await failed()) >= 2, 5_000, 'the first two spans counted as failed');
    await waitUntil(() => warnings().length === 1, 2_000, 'the warning');
    expect(warnings()[0]).toMatchObject({ level: 40, failedSpans: 2, error: expect.stringContaining('400') });
    // More refused batches within the window: counted, not logged again.
    await ask();
    await ask();
    await waitUntil(async () => (await failed()) >= 6, 5_000, 'six spans counted as failed');
    expect(warnings()).toHaveLength(1);
    expect(await gw.metrics.registry.metrics()).toMatch(/^model_gateway_trace_spans_exported_total 0$/m);
    expect(receiver.spans).toEqual([]);
  });

  for (const protocol of ['http/protobuf', 'http/json']) {
    it(`counts the spans a collector rejects in a partial success as failed, not exported (${protocol})`, async () => {
      const gw = await start({ OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, { receiver: { rejectSpans: 1 } });
      await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
      const count = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      // Both spans answered for: each export (one or two) had one of its spans rejected.
      const text = await waitUntil(async () => {
        const t = await gw.metrics.registry.metrics();
        return count(t, 'model_gateway_trace_spans_exported_total') + count(t, 'model_gateway_trace_spans_failed_total') === 2 ? t : undefined;
      });
      expect(count(text, 'model_gateway_trace_spans_failed_total')).toBe(receiver.requests.length);
      const warning = await waitUntil(() => gw.logs.find((l) => String(l.msg).startsWith('trace export failed')), 2_000, 'the warning');
      expect(warning).toMatchObject({ failedSpans: 1, error: expect.stringContaining('partial success') });
    });
  }

  it('records prompts and completions only with the content flag, with the backend key masked in them', async () => {
    // The upstream's answer quotes its own key ("from <name>"): the client gets it masked, and so does the trace.
    const echo = await startFaultyUpstream(`echo ${PRIMARY_KEY.value}`);
    try {
      const gw = await start({}, { content: true, primary: echo.baseURL });
      const client = gw.client(CLIENT_KEY.value);
      const answer = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'what is 2+2?' }] },
        { headers: { traceparent: traceparent(TRACE, PARENT, true) } },
      );
      expect(answer.choices[0]!.message.content).toMatch(/^from echo \*+$/);
      const streamTrace = '2cf7651916cd43dd8448eb211c80319c';
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'and 3+3?' }], stream: true },
        { headers: { traceparent: traceparent(streamTrace, PARENT, true) } },
      );
      for await (const _ of stream);

      // In the conventions' schema, on the server span and on the attempt (the GenAI client span) alike.
      const masked = expect.stringMatching(/^from echo \*+$/);
      for (const span of await spansOf(TRACE, 2)) {
        expect(JSON.parse(String(span.attributes['gen_ai.input.messages'])), span.name).toEqual([
          { role: 'user', parts: [{ type: 'text', content: 'what is 2+2?' }] },
        ]);
        expect(JSON.parse(String(span.attributes['gen_ai.output.messages'])), span.name).toEqual([
          { role: 'assistant', parts: [{ type: 'text', content: masked }], finish_reason: 'stop' },
        ]);
      }
      for (const span of await spansOf(streamTrace, 2)) {
        expect(JSON.parse(String(span.attributes['gen_ai.input.messages'])), span.name).toEqual([
          { role: 'user', parts: [{ type: 'text', content: 'and 3+3?' }] },
        ]);
        expect(JSON.parse(String(span.attributes['gen_ai.output.messages'])), span.name).toEqual([
          { role: 'assistant', parts: [{ type: 'text', content: masked }], finish_reason: 'stop' },
        ]);
      }
      expectNoLeaks({ 'exported spans': receiver.rawText() }, [CLIENT_KEY, PRIMARY_KEY, BACKUP_KEY]);
    } finally {
      await echo.close();
    }
  });

  it("masks the route's backend keys in a recorded prompt too, as in the completion", async () => {
    const gw = await start({}, { content: true });
    // A prompt that quotes the keys of the backend it goes to and of the fallback it could go to.
    const prompt = `is ${PRIMARY_KEY.value} or "${BACKUP_KEY.value}" a key?`;
    await gw
      .client(CLIENT_KEY.value)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }] },
        { headers: { traceparent: traceparent(TRACE, PARENT, true) } },
      );
    const spans = await spansOf(TRACE, 2);
    const input = spans.find((s) => s.kind === SERVER)!.attributes['gen_ai.input.messages'];
    expect(input).toContain(`is ${'*'.repeat(PRIMARY_KEY.value.length)} or`);
    expectNoLeaks({ 'exported spans': receiver.rawText() }, [CLIENT_KEY, PRIMARY_KEY, BACKUP_KEY]);
  });

  it('starts a new trace when the client sends none, and records each failover attempt with why it failed over', async () => {
    const gw = await start();
    primary.setFault({ kind: 'status', status: 503 });
    const answer = await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(answer.choices[0]!.message.content).toBe('from backup');

    const first = parseTraceparent(primary.requests[0]!.headers.traceparent);
    const second = parseTraceparent(backup.requests[0]!.headers.traceparent);
    expect(second.traceId).toBe(first.traceId);
    expect(second.parentId).not.toBe(first.parentId);
    const spans = await spansOf(first.traceId, 3);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.parentSpanId).toBe('');
    const attempts = spans
      .filter((s) => s.kind === CLIENT)
      .sort((a, b) => Number(a.attributes['model_gateway.attempt']) - Number(b.attributes['model_gateway.attempt']));
    expect(attempts.map((a) => a.spanId)).toEqual([first.parentId, second.parentId]);
    expect(attempts.every((a) => a.parentSpanId === server.spanId)).toBe(true);
    expect(attempts[0]!.attributes).toMatchObject({
      'model_gateway.attempt': 1,
      'model_gateway.backend': 'primary',
      'http.response.status_code': 503,
      'error.type': '503',
      'model_gateway.failover.reason': '5xx',
    });
    expect(attempts[0]!.statusCode).toBe(ERROR);
    expect(attempts[1]!.attributes).toMatchObject({ 'model_gateway.attempt': 2, 'model_gateway.backend': 'backup', 'http.response.status_code': 200 });
    expect(attempts[1]!.attributes['model_gateway.failover.reason']).toBeUndefined();
    expect(attempts[1]!.statusCode).not.toBe(ERROR);
    expect(server.attributes).toMatchObject({ 'model_gateway.attempts': 2, 'model_gateway.backend': 'backup', 'gen_ai.response.model': 'upstream-b' });
  });

  it('marks an upstream 4xx an error on the attempt (HTTP client conventions) but not on the server span', async () => {
    const gw = await start();
    primary.setFault({ kind: 'status', status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } });
    await expect(
      gw
        .client(CLIENT_KEY.value)
        .chat.completions.create(
          { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
          { headers: { traceparent: traceparent(TRACE, PARENT, true) }, maxRetries: 0 },
        ),
    ).rejects.toMatchObject({ status: 400 });
    const spans = await spansOf(TRACE, 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    expect(attempt.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': '400' });
    expect(attempt.statusCode).toBe(ERROR);
    expect(server.attributes['http.response.status_code']).toBe(400);
    expect(server.attributes['error.type']).toBeUndefined();
    expect(server.statusCode).not.toBe(ERROR);
  });

  it('names a method HTTP does not define _OTHER, and its span HTTP, as the HTTP conventions ask', async () => {
    const gw = await start();
    const send = (method: string, traceId: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(`${gw.origin}/v1/models`);
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method, headers: { traceparent: traceparent(traceId, PARENT, true) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject).end();
      });
    const other = '3cf7651916cd43dd8448eb211c80319c';
    await send('PROPFIND', other);
    await send('GET', TRACE);
    const [webdav] = await spansOf(other, 1);
    expect(webdav!.name).toBe('HTTP /v1/models');
    expect(webdav!.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'PROPFIND' });
    const [get] = await spansOf(TRACE, 1);
    expect(get!.name).toBe('GET /v1/models');
    expect(get!.attributes['http.request.method']).toBe('GET');
    expect(get!.attributes['http.request.method_original']).toBeUndefined();
  });

  it('records the time to the first chunk of a stream on the server span and on the attempt, as the conventions name it', async () => {
    const gw = await start();
    const stream = await sampledStream(gw);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('from primary');
    const spans = await spansOf(TRACE, 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    for (const span of [server, attempt]) {
      expect(span.attributes['gen_ai.response.time_to_first_chunk'], span.name).toBeGreaterThan(0);
      // An event no convention defines is not sent.
      expect(span.events.map((e) => e.name)).not.toContain('gen_ai.first_token');
    }
    // The attempt's is within the attempt (the server span's counts from the request's arrival, a little before it starts).
    const duration = Number(BigInt(attempt.endTimeUnixNano) - BigInt(attempt.startTimeUnixNano));
    expect((attempt.attributes['gen_ai.response.time_to_first_chunk'] as number) * 1e9).toBeLessThanOrEqual(duration + 1e6);
    // The attempt's is measured from its own start, which is after the request's arrival.
    expect(attempt.attributes['gen_ai.response.time_to_first_chunk']).toBeLessThanOrEqual(server.attributes['gen_ai.response.time_to_first_chunk'] as number);
  });

  it('records the time to the first chunk of a whole answer retold as stream events (an upstream that ignored stream)', async () => {
    const gw = await start();
    const whole = {
      id: 'chatcmpl-whole',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-a',
      choices: [{ index: 0, message: { role: 'assistant', content: 'told whole' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    };
    primary.setFault({ kind: 'status', status: 200, body: whole });
    const stream = await sampledStream(gw);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('told whole');
    const spans = await spansOf(TRACE, 2);
    for (const span of spans) expect(span.attributes['gen_ai.response.time_to_first_chunk'], span.name).toBeGreaterThan(0);
  });

  it('ends the spans of a stream the upstream cut mid-way, the attempt with an error', async () => {
    const gw = await start();
    primary.setFault({ kind: 'close-mid-stream', chunks: 2 });
    const stream = await sampledStream(gw);
    // The client gets the gateway's error event after the first chunks.
    await expect(async () => {
      for await (const _ of stream);
    }).rejects.toThrow(/failed in the middle of the stream/);
    const spans = await spansOf(TRACE, 2);
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    expect(attempt.statusCode).toBe(ERROR);
    expect(attempt.attributes['error.type']).toEqual(expect.any(String));
    expect(attempt.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(BigInt(attempt.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(server.endTimeUnixNano));
  });

  it("follows the client's decision not to sample (the default sampler is parent-based), still propagating the trace", async () => {
    const gw = await start();
    const notSampled = '1bf7651916cd43dd8448eb211c80319c';
    await gw
      .client(CLIENT_KEY.value)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { headers: { traceparent: traceparent(notSampled, PARENT, false) } },
      );
    // A sampled request after it: once its spans are in, anything of the first would be too (one exporter queue).
    await gw
      .client(CLIENT_KEY.value)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { headers: { traceparent: traceparent(TRACE, PARENT, true) } },
      );
    await spansOf(TRACE, 2);
    await tracing!.shutdown();
    expect(receiver.spans.filter((s) => s.traceId === notSampled)).toEqual([]);
    const sent = parseTraceparent(primary.requests[0]!.headers.traceparent);
    expect(sent).toMatchObject({ traceId: notSampled, sampled: false });
    expect(sent.parentId).not.toBe(PARENT); // the gateway's own (unrecorded) server span
    expect((await waitUntil(() => gw.logs.find((l) => l.msg === 'request'), 2_000, 'the access log line')).traceId).toBe(notSampled);
  });

  it('exports nothing with OTEL_TRACES_SAMPLER=always_off, and tells the upstream so', async () => {
    const gw = await start({ OTEL_TRACES_SAMPLER: 'always_off' });
    for (let i = 0; i < 3; i++) await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    await tracing!.shutdown(); // exports whatever was queued
    expect(receiver.spans).toEqual([]);
    expect(primary.requests).toHaveLength(3);
    for (const r of primary.requests) expect(parseTraceparent(r.headers.traceparent).sampled).toBe(false);
  });

  it('samples at OTEL_TRACES_SAMPLER_ARG: some traces, not all, exactly those the upstream was told are sampled', async () => {
    const gw = await start({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    const n = 60;
    for (let i = 0; i < n; i++) await gw.client(CLIENT_KEY.value).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    await tracing!.shutdown();
    const told = primary.requests.map((r) => parseTraceparent(r.headers.traceparent));
    const sampled = new Set(told.filter((t) => t.sampled).map((t) => t.traceId));
    const exported = new Set(receiver.spans.map((s) => s.traceId));
    expect(exported).toEqual(sampled);
    // Binomial(60, 0.5) falls outside 10..50 with a probability below 1e-7.
    expect(sampled.size).toBeGreaterThanOrEqual(10);
    expect(sampled.size).toBeLessThanOrEqual(50);
    // Each exported trace is whole: its server span and its attempt.
    for (const id of exported) expect(receiver.spans.filter((s) => s.traceId === id)).toHaveLength(2);
  });

  it('puts sampled trace ids on histogram buckets as exemplars for OpenMetrics scrapers; the classic format stays as it was', async () => {
    const gw = await start();
    await gw
      .client(CLIENT_KEY.value)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { headers: { traceparent: traceparent(TRACE, PARENT, true) } },
      );
    await waitUntil(() => gw.logs.some((l) => l.msg === 'request'), 2_000, 'the access log line');
    const server: Server = createServer(
      metricsHandler({ metrics: () => gw.metrics.registry.metrics(), contentType: gw.metrics.registry.contentType, openMetrics: gw.metrics.openMetrics }),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    try {
      // What Prometheus sends.
      const open = await fetch(url, { headers: { accept: 'application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.2,*/*;q=0.1' } });
      expect(open.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
      const om = await open.text();
      expect(om).toMatch(new RegExp(`^gen_ai_server_request_duration_seconds_bucket\\{[^}]*\\} 1 # \\{trace_id="${TRACE}"\\} [0-9.e-]+ [0-9.]+$`, 'm'));
      // The usage histogram too (recorded by the usage feature with the request's trace).
      expect(om).toMatch(new RegExp(`^gen_ai_client_token_usage_bucket\\{[^}]*type="output"[^}]*\\} 1 # \\{trace_id="${TRACE}"\\}`, 'm'));
      expect(om).toMatch(/^model_gateway_requests_total\{/m);
      expect(om.endsWith('# EOF\n')).toBe(true);

      for (const accept of [undefined, 'text/plain;version=0.0.4', '*/*']) {
        const classic = await fetch(url, accept ? { headers: { accept } } : {});
        expect(classic.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
        const text = await classic.text();
        expect(text).not.toContain('trace_id');
        expect(text).not.toContain('# EOF');
        // Rendering OpenMetrics (which renames counters inside prom-client) left the classic names alone.
        expect(text).toMatch(/^# TYPE model_gateway_requests_total counter$/m);
        expect(text).toMatch(/^model_gateway_requests_total\{/m);
      }
    } finally {
      server.close();
    }
  });
});

describe('tracing off', () => {
  it('adds nothing: no trace id in the log, the client traceparent passed through untouched, no exemplars', async () => {
    const upstream = await startFaultyUpstream('plain');
    const gw = await startGateway(manifests(upstream.baseURL, upstream.baseURL));
    try {
      await gw
        .client(CLIENT_KEY.value)
        .chat.completions.create(
          { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
          { headers: { traceparent: traceparent(TRACE, PARENT, true), tracestate: 'vendor=abc' } },
        );
      expect(upstream.requests[0]!.headers.traceparent).toBe(traceparent(TRACE, PARENT, true));
      expect(upstream.requests[0]!.headers.tracestate).toBe('vendor=abc');
      await waitUntil(() => gw.logs.some((l) => l.msg === 'request'), 2_000, 'the access log line');
      expect(gw.logs.find((l) => l.msg === 'request')!.traceId).toBeUndefined();
      expect(gw.metrics.openMetrics).toBeUndefined();
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
