// A loopback OTLP/HTTP trace receiver: what an OpenTelemetry Collector's otlphttp receiver does on POST /v1/traces,
// for tests. Protobuf bodies (application/x-protobuf, the exporter's default) are decoded with the official
// protocol definitions: the protobufjs code the OpenTelemetry JS project generated from opentelemetry-proto's
// .proto files (shipped in @opentelemetry/otlp-transformer up to 0.216, installed as the dev dependency
// `otlp-proto-definitions`), independent of the gateway's exporter (the SDK's serializer).
// OTLP/JSON bodies are read by the proto3 JSON mapping the OTLP specification defines (ids as hex, 64-bit integers
// as strings). Both become flat spans; every raw body is kept so tests can search it for secrets.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import definitions from 'otlp-proto-definitions/build/src/generated/root.js';

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: unknown; kvlistValue?: unknown };
interface KeyValue {
  key: string;
  value: AnyValue;
}

type AttributeValue = string | number | boolean | undefined;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** SpanKind as OTLP numbers it: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly { name: string; attributes: Readonly<Record<string, AttributeValue>>; timeUnixNano: string }[];
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  /** The resource's attributes (service.name, …). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly traceState: string | undefined;
}

interface ExportRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly contentType: string;
  readonly body: Buffer;
  /** The body as sent, when it came gzip-compressed. */
  readonly compressed: Buffer | undefined;
  /** Over https with client certificates: the CN of the one the exporter presented. */
  readonly clientCertificate: string | undefined;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter appends /v1/traces). */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly requests: ExportRequest[];
  /** Every raw export body, as text. */
  rawText(): string;
  close(): Promise<void>;
}

export interface OtlpReceiverOptions {
  /** Serve https with this certificate; with `clientCa`, require a client certificate it signed. */
  readonly tls?: { readonly key: string; readonly cert: string; readonly clientCa?: string };
  /** Answer the first this many exports 503 with `retry-after: 0` (kept in `requests`, their spans not taken). */
  readonly busyFirst?: number;
  /** Answer every export with this status (a collector that refuses everything), its spans not taken. */
  readonly refuseWith?: number;
  /** Take every export but answer it with an OTLP partial success rejecting this many of its spans. */
  readonly rejectSpans?: number;
  /** Never answer an export (a collector that hangs): kept in `requests`, its connection left open until close. */
  readonly hang?: boolean;
}

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: ExportRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    // A gzip body (OTEL_EXPORTER_OTLP_COMPRESSION=gzip) is kept as it arrived, in `compressed`, and read unzipped.
    const compressed = req.headers['content-encoding'] === 'gzip' ? Buffer.concat(chunks) : undefined;
    const body = compressed ? gunzipSync(compressed) : Buffer.concat(chunks);
    const contentType = String(req.headers['content-type'] ?? '');
    const cn = options.tls ? (req.socket as TLSSocket).getPeerCertificate().subject?.CN : undefined;
    const peer = Array.isArray(cn) ? cn[0] : cn;
    requests.push({ path: req.url ?? '', headers: req.headers, contentType, body, compressed, clientCertificate: peer });
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (options.hang) return;
    if (options.refuseWith !== undefined) {
      res.writeHead(options.refuseWith, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 3, message: 'refused by the test' }));
      return;
    }
    if (requests.length <= (options.busyFirst ?? 0)) {
      res.writeHead(503, { 'retry-after': '0' }).end();
      return;
    }
    const json = contentType.startsWith('application/json');
    try {
      spans.push(...decodeJson(json ? JSON.parse(body.toString('utf8')) : protobufAsJson(body)));
    } catch (err) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 3, message: (err as Error).message }));
      return;
    }
    if (options.rejectSpans !== undefined) {
      const partialSuccess = { rejectedSpans: options.rejectSpans, errorMessage: 'rejected by the test' };
      if (json)
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ partialSuccess: { ...partialSuccess, rejectedSpans: String(options.rejectSpans) } }));
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(ExportTraceServiceResponse.encode({ partialSuccess }).finish());
      return;
    }
    // An empty ExportTraceServiceResponse: {} in JSON, an empty message in protobuf.
    if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  };
  const tls = options.tls;
  const server: Server = tls
    ? createTlsServer({ key: tls.key, cert: tls.cert, ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}) }, handle)
    : createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    endpoint: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    rawText: () => requests.map((r) => r.body.toString('utf8')).join('\n'),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** The part of the generated root used here (its declaration file types it as a bare protobufjs Root). */
interface ProtoType {
  decode(body: Uint8Array): unknown;
  encode(message: Record<string, unknown>): { finish(): Uint8Array };
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
/** ExportTraceServiceRequest and ExportTraceServiceResponse from the official definitions. */
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = (
  definitions as unknown as {
    opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType; ExportTraceServiceResponse: ProtoType } } } } };
  }
).opentelemetry.proto.collector.trace.v1;
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** A protobuf ExportTraceServiceRequest in the OTLP/JSON shape: ids as hex, 64-bit integers as strings. */
function protobufAsJson(body: Buffer): { resourceSpans?: unknown } {
  const message = ExportTraceServiceRequest.decode(body);
  const object = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: String, oneofs: false });
  return JSON.parse(JSON.stringify(object), (key, value) =>
    ID_FIELDS.has(key) && typeof value === 'string' ? Buffer.from(value, 'base64').toString('hex') : value,
  );
}

/** ExportTraceServiceRequest (OTLP/JSON) → flat spans; throws on anything that is not of that shape. */
function decodeJson(doc: { resourceSpans?: unknown }): ReceivedSpan[] {
  if (!Array.isArray(doc.resourceSpans)) throw new Error('not an ExportTraceServiceRequest: no resourceSpans');
  const out: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans as { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[]) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const id = (name: string, bytes: number, optional = false): string => {
          const v = s[name];
          if ((v === undefined || v === '') && optional) return '';
          if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(v)) throw new Error(`${name} is not ${bytes} bytes of hex: ${String(v)}`);
          return v;
        };
        out.push({
          traceId: id('traceId', 16),
          spanId: id('spanId', 8),
          parentSpanId: id('parentSpanId', 8, true),
          name: String(s.name),
          kind: Number(s.kind),
          attributes: attributes(s.attributes as KeyValue[] | undefined),
          events: ((s.events as { name: string; attributes?: KeyValue[]; timeUnixNano: string }[] | undefined) ?? []).map((e) => ({
            name: e.name,
            attributes: attributes(e.attributes),
            timeUnixNano: String(e.timeUnixNano),
          })),
          statusCode: Number((s.status as { code?: number } | undefined)?.code ?? 0),
          startTimeUnixNano: String(s.startTimeUnixNano),
          endTimeUnixNano: String(s.endTimeUnixNano),
          resource,
          traceState: typeof s.traceState === 'string' && s.traceState !== '' ? s.traceState : undefined,
        });
      }
    }
  }
  return out;
}

function attributes(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else out[key] = undefined;
  }
  return out;
}
