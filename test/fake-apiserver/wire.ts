// Wire-level pieces of the fake API server: URL → resource, HTTP method → RBAC verb, JSON bodies, Status objects,
// watch event lines, and the MicroTime check the real API server applies to Leases.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, type EventType, type ResourceType } from './store.js';

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export function parsePath(
  types: readonly ResourceType[],
  path: string,
): { rt: ResourceType; namespace?: string; name?: string; subresource?: string } | undefined {
  const parts = path.split('/').filter(Boolean);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') [group, version, rest] = ['', parts[1] ?? '', parts.slice(2)];
  else if (parts[0] === 'apis') [group, version, rest] = [parts[1] ?? '', parts[2] ?? '', parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const rt = types.find((t) => t.group === group && t.version === version && t.plural === rest[0]);
  if (!rt || rest.length > 3) return undefined;
  return { rt, namespace, name: rest[1], subresource: rest[2] };
}

export function verbOf(method: string, name: string | undefined, watch: boolean): Verb {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : name ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    default:
      return 'delete';
  }
}

/** The real API server refuses Lease times that are not MicroTime (RFC 3339 with exactly 6 fractional digits). */
export function checkLeaseTimes(rt: ResourceType, body: unknown): void {
  if (rt.kind !== 'Lease') return;
  const spec = (body as { spec?: Record<string, unknown> }).spec ?? {};
  for (const f of ['acquireTime', 'renewTime']) {
    const v = spec[f];
    if (v !== undefined && (typeof v !== 'string' || !MICRO_TIME.test(v))) {
      throw new ApiError(400, 'BadRequest', `spec.${f}: cannot parse "${String(v)}" as MicroTime`);
    }
  }
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'BadRequest', 'the request body is not JSON');
  }
}

export function statusBody(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, statusBody(code, reason, message));
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function writeEvent(res: ServerResponse, type: EventType | 'BOOKMARK' | 'ERROR', object: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify({ type, object })}\n`);
}
