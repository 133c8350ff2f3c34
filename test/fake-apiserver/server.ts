// A fake Kubernetes API server on 127.0.0.1 that speaks the real wire protocol to the real
// @kubernetes/client-node: paginated lists with resourceVersion, chunked watch streams (ADDED / MODIFIED /
// DELETED / BOOKMARK / ERROR), 410 Gone after compaction, merge patches of the status subresource, Leases with
// optimistic concurrency, label selectors. It records every request (for the RBAC test) and can fail requests,
// drop watch connections or become unreachable on demand.
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parseLabelSelector } from './label-selector.js';
import { ApiError, apiVersionOf, Store, translate, type EventType, type KubeObj, type ResourceType, type Watcher } from './store.js';
import { checkLeaseTimes, parsePath, readJson, sendJson, sendStatus, statusBody, verbOf, writeEvent, type Verb } from './wire.js';

export const RESOURCE_TYPES = {
  ModelRoute: {
    group: 'modelgateway.io',
    version: 'v1alpha1',
    plural: 'modelroutes',
    kind: 'ModelRoute',
    statusSubresource: true,
    generation: true,
    listItemsCarryKind: true,
  },
  Group: {
    group: 'modelgateway.io',
    version: 'v1alpha1',
    plural: 'groups',
    kind: 'Group',
    statusSubresource: true,
    generation: true,
    listItemsCarryKind: true,
  },
  GatewayToken: {
    group: 'modelgateway.io',
    version: 'v1alpha1',
    plural: 'gatewaytokens',
    kind: 'GatewayToken',
    statusSubresource: true,
    generation: true,
    listItemsCarryKind: true,
  },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', statusSubresource: false, generation: false, listItemsCarryKind: false },
  // Created by the leader for a budget past warnAt (controller/budget-events.ts); a second create of a name is 409.
  Event: { group: '', version: 'v1', plural: 'events', kind: 'Event', statusSubresource: false, generation: false, listItemsCarryKind: false },
  Lease: {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    statusSubresource: false,
    generation: false,
    listItemsCarryKind: false,
  },
} as const satisfies Record<string, ResourceType>;
export type FakeKind = keyof typeof RESOURCE_TYPES;

/** One request as RBAC sees it. */
export interface RecordedRequest {
  readonly method: string;
  readonly verb: Verb;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly labelSelector: string | undefined;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Whether an Authorization header was sent. */
  readonly authenticated: boolean;
  /** The bearer token, to tell test clients apart (tests use made-up tokens; a real server would map it to a user). */
  readonly user: string | undefined;
  /** When the request arrived (epoch ms). */
  readonly at: number;
  /** The parsed body of writes. */
  body?: unknown;
}

export interface FailureRule {
  /** Matches when every given field equals the request's. */
  readonly match: Partial<Pick<RecordedRequest, 'verb' | 'resource' | 'subresource' | 'namespace' | 'name' | 'user'>>;
  readonly status: number;
  /** How many requests to fail (default 1; Infinity until cleared). */
  remaining: number;
}

export interface FakeApiServerOptions {
  /** How a watch from a compacted resourceVersion is refused: an ERROR event in a 200 stream (what current API servers do) or HTTP 410. */
  readonly expiredWatch?: 'event' | 'http';
  /** Send a BOOKMARK to watches that allow them this often (ms); 0 = only on bookmark(). */
  readonly bookmarkIntervalMs?: number;
  /** Serve HTTPS with this key and certificate (PEM), as a real API server does. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** Refuse (401) requests without exactly this bearer token. */
  readonly requireToken?: string;
}

interface OpenWatch extends Watcher {
  readonly res: ServerResponse;
  readonly bookmarks: boolean;
}

export class FakeApiServer {
  readonly store = new Store();
  readonly requests: RecordedRequest[] = [];
  readonly failures: FailureRule[] = [];
  #server: Server | undefined;
  #sockets = new Set<Socket>();
  #accepted = 0;
  #watches = new Set<OpenWatch>();
  #unreachable = false;
  readonly #stalls: { match: FailureRule['match']; released: Promise<void> }[] = [];
  #port = 0;
  #bookmarkTimer: NodeJS.Timeout | undefined;
  #snapshots = new Map<string, { rv: number; items: KubeObj[] }>();
  #nextSnapshot = 0;
  readonly #options: FakeApiServerOptions;

  constructor(options: FakeApiServerOptions = {}) {
    this.#options = options;
  }

  async start(): Promise<string> {
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.#handle(req, res);
    const server = this.#options.tls ? createHttpsServer(this.#options.tls, handler) : createServer(handler);
    server.on('connection', (socket) => {
      if (this.#unreachable) return void socket.destroy();
      this.#accepted++;
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
    if (this.#options.bookmarkIntervalMs) {
      this.#bookmarkTimer = setInterval(() => this.bookmark(), this.#options.bookmarkIntervalMs);
      this.#bookmarkTimer.unref();
    }
    return this.url;
  }

  get url(): string {
    return `${this.#options.tls ? 'https' : 'http'}://127.0.0.1:${this.#port}`;
  }

  async stop(): Promise<void> {
    clearInterval(this.#bookmarkTimer);
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  // ---- test controls ------------------------------------------------------------------------------------

  /** Creates or replaces an object the way `kubectl apply` ends up doing (not recorded as a gateway request). */
  apply(obj: KubeObj): KubeObj {
    const rt = typeOf(obj);
    const existing = this.store.tryGet(rt, obj.metadata.namespace, obj.metadata.name);
    if (!existing) return this.store.create(rt, obj);
    return this.store.update(rt, { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } });
  }

  remove(kind: FakeKind, namespace: string, name: string): void {
    this.store.delete(RESOURCE_TYPES[kind], namespace, name);
  }

  /** `kubectl patch --type merge`. */
  patch(kind: FakeKind, namespace: string, name: string, patch: unknown): KubeObj {
    return this.store.mergePatch(RESOURCE_TYPES[kind], namespace, name, patch);
  }

  get(kind: FakeKind, namespace: string, name: string): KubeObj | undefined {
    return this.store.tryGet(RESOURCE_TYPES[kind], namespace, name);
  }

  /** Makes the next `count` matching requests fail with `status`. */
  failRequests(match: FailureRule['match'], status: number, count = 1): FailureRule {
    const rule: FailureRule = { match, status, remaining: count };
    this.failures.push(rule);
    return rule;
  }

  /**
   * Leaves matching requests unanswered (a connection gone silent) until the returned function is called: then
   * later ones are answered again, and the stalled ones too unless `answer` is false (they never are).
   */
  stallRequests(match: FailureRule['match']): (answer?: boolean) => void {
    let release = () => {};
    const stall = { match, released: new Promise<void>((resolve) => (release = resolve)) };
    this.#stalls.push(stall);
    return (answer = true) => {
      const i = this.#stalls.indexOf(stall);
      if (i >= 0) this.#stalls.splice(i, 1);
      if (answer) release();
    };
  }

  clearFailures(): void {
    this.failures.length = 0;
  }

  /** Cuts every open watch stream mid-flight (the client sees the connection end). */
  dropWatches(): number {
    const n = this.#watches.size;
    for (const w of [...this.#watches]) w.res.destroy();
    return n;
  }

  /** Sends an ERROR event with the given code (410: "too old resource version") to open watches, then closes them. */
  sendWatchError(code = 410, kind?: FakeKind): void {
    for (const w of [...this.#watches]) {
      if (kind && w.rt !== RESOURCE_TYPES[kind]) continue;
      writeEvent(w.res, 'ERROR', statusBody(code, code === 410 ? 'Expired' : 'InternalError', `watch error ${code}`));
      w.res.end();
    }
  }

  /**
   * Unreachable: every open connection is cut, and until set back new ones are accepted and reset at once
   * ('reset'), or refused because nothing listens on the port any more ('refuse', as when the API server is down).
   */
  async setUnreachable(down: boolean, how: 'reset' | 'refuse' = 'reset'): Promise<void> {
    this.#unreachable = down && how === 'reset';
    const server = this.#server!;
    if (down) {
      for (const s of this.#sockets) s.destroy();
      if (how === 'refuse') await new Promise<void>((resolve) => server.close(() => resolve()));
    } else if (!server.listening) {
      await new Promise<void>((resolve) => server.listen(this.#port, '127.0.0.1', resolve));
    }
  }

  /** Sends a BOOKMARK carrying the current resourceVersion to watches that allow bookmarks. */
  bookmark(): void {
    const rv = String(this.store.resourceVersion);
    for (const w of this.#watches) {
      if (!w.bookmarks) continue;
      writeEvent(w.res, 'BOOKMARK', { apiVersion: apiVersionOf(w.rt), kind: w.rt.kind, metadata: { resourceVersion: rv } });
    }
  }

  /** TCP connections accepted since start (each one a TLS handshake when serving HTTPS). */
  get connections(): number {
    return this.#accepted;
  }

  /** TCP connections open now. */
  get openConnections(): number {
    return this.#sockets.size;
  }

  get openWatches(): number {
    return this.#watches.size;
  }

  /** Requests whose verb is one of `verbs` (e.g. the writes). */
  recorded(...verbs: RecordedRequest['verb'][]): RecordedRequest[] {
    return this.requests.filter((r) => verbs.length === 0 || verbs.includes(r.verb));
  }

  // ---- HTTP -------------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parsed = parsePath(Object.values(RESOURCE_TYPES), url.pathname);
    if (!parsed) return sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
    const { rt, namespace, name, subresource } = parsed;
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const verb = verbOf(req.method ?? 'GET', name, watch);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      verb,
      apiGroup: rt.group,
      resource: rt.plural,
      subresource,
      namespace,
      name,
      labelSelector: url.searchParams.get('labelSelector') ?? undefined,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authenticated: /^Bearer \S+/.test(req.headers.authorization ?? ''),
      user: /^Bearer (\S+)/.exec(req.headers.authorization ?? '')?.[1],
      at: Date.now(),
    };
    this.requests.push(record);
    if (this.#options.requireToken !== undefined && req.headers.authorization !== `Bearer ${this.#options.requireToken}`) {
      return sendStatus(res, 401, 'Unauthorized', 'Unauthorized');
    }
    const rule = this.failures.find((f) => f.remaining > 0 && Object.entries(f.match).every(([k, v]) => record[k as keyof RecordedRequest] === v));
    if (rule) {
      rule.remaining--;
      return sendStatus(res, rule.status, rule.status === 403 ? 'Forbidden' : 'InternalError', `injected failure ${rule.status}`);
    }
    const stall = this.#stalls.find((f) => Object.entries(f.match).every(([k, v]) => record[k as keyof RecordedRequest] === v));
    if (stall) await stall.released;
    try {
      const body = ['POST', 'PUT', 'PATCH'].includes(req.method ?? '') ? await readJson(req) : undefined;
      record.body = body;
      if (verb === 'watch') return this.#watch(req, res, rt, namespace, url);
      if (verb === 'list') return this.#list(res, rt, namespace, url);
      if (verb === 'get') return sendJson(res, 200, this.store.get(rt, namespace, name!));
      if (verb === 'create') {
        checkLeaseTimes(rt, body);
        return sendJson(res, 201, this.store.create(rt, { ...(body as KubeObj), metadata: { ...(body as KubeObj).metadata, namespace } }));
      }
      if (verb === 'update') {
        checkLeaseTimes(rt, body);
        const obj = body as KubeObj;
        if (obj.metadata?.name !== name) throw new ApiError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
        const sub = subresource === 'status' ? 'status' : undefined;
        return sendJson(
          res,
          200,
          this.store.update(rt, { ...obj, metadata: { ...obj.metadata, namespace } }, { requireResourceVersion: rt.kind === 'Lease', subresource: sub }),
        );
      }
      if (verb === 'patch') {
        const type = (req.headers['content-type'] ?? '').split(';')[0];
        if (type !== 'application/merge-patch+json')
          throw new ApiError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got ${type})`,
          );
        const sub = subresource === 'status' ? 'status' : undefined;
        if (subresource && subresource !== 'status') throw new ApiError(404, 'NotFound', `no subresource ${subresource}`);
        return sendJson(res, 200, this.store.mergePatch(rt, namespace, name!, body, sub));
      }
      if (verb === 'delete') return sendJson(res, 200, this.store.delete(rt, namespace, name!));
      throw new ApiError(405, 'MethodNotAllowed', 'method not allowed');
    } catch (err) {
      if (err instanceof ApiError) return sendStatus(res, err.code, err.reason, err.message);
      return sendStatus(res, 500, 'InternalError', (err as Error).message);
    }
  }

  #list(res: ServerResponse, rt: ResourceType, namespace: string | undefined, url: URL): void {
    const limit = Number(url.searchParams.get('limit') ?? 0);
    const cont = url.searchParams.get('continue');
    let snap: { rv: number; items: KubeObj[] };
    let offset = 0;
    if (cont) {
      const token = JSON.parse(Buffer.from(cont, 'base64url').toString()) as { id: string; offset: number };
      const found = this.#snapshots.get(token.id);
      if (!found || found.rv < this.store.compactedRV) {
        throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.');
      }
      snap = found;
      offset = token.offset;
    } else {
      snap = { rv: this.store.resourceVersion, items: this.store.list(rt, namespace, url.searchParams.get('labelSelector') ?? undefined) };
    }
    const end = limit > 0 ? Math.min(offset + limit, snap.items.length) : snap.items.length;
    let next: string | undefined;
    if (end < snap.items.length) {
      const id = cont ? (JSON.parse(Buffer.from(cont, 'base64url').toString()) as { id: string }).id : String(++this.#nextSnapshot);
      this.#snapshots.set(id, snap);
      next = Buffer.from(JSON.stringify({ id, offset: end })).toString('base64url');
    }
    const items = snap.items.slice(offset, end).map((o) => {
      if (rt.listItemsCarryKind) return o;
      const { apiVersion: _a, kind: _k, ...rest } = o;
      return rest;
    });
    sendJson(res, 200, {
      apiVersion: apiVersionOf(rt),
      kind: `${rt.kind}List`,
      metadata: { resourceVersion: String(snap.rv), ...(next ? { continue: next } : {}) },
      items,
    });
  }

  #watch(req: IncomingMessage, res: ServerResponse, rt: ResourceType, namespace: string | undefined, url: URL): void {
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    const selector = parseLabelSelector(url.searchParams.get('labelSelector'));
    const filter = { namespace, selector };
    let replay: { type: EventType; object: KubeObj }[] = [];
    if (rvParam === '' || rvParam === '0') {
      // "Start at most recent" with synthetic ADDED events for the current state.
      replay = this.store.list(rt, namespace, url.searchParams.get('labelSelector') ?? undefined).map((object) => ({ type: 'ADDED', object }));
    } else {
      try {
        replay = this.store.eventsSince(rt, Number(rvParam)).flatMap((e) => {
          const type = translate(e, filter);
          return type ? [{ type, object: structuredClone(e.object) }] : [];
        });
      } catch (err) {
        if (!(err instanceof ApiError) || this.#options.expiredWatch === 'http') throw err;
        res.writeHead(200, { 'content-type': 'application/json' });
        writeEvent(res, 'ERROR', statusBody(err.code, err.reason, err.message));
        return void res.end();
      }
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    for (const e of replay) writeEvent(res, e.type, e.object);
    const w: OpenWatch = {
      rt,
      ...filter,
      res,
      bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
      send: (type, object) => writeEvent(res, type, object),
    };
    this.#watches.add(w);
    this.store.watchers.add(w);
    const timeout = Number(url.searchParams.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    const cleanup = () => {
      clearTimeout(timer);
      this.#watches.delete(w);
      this.store.watchers.delete(w);
    };
    req.on('close', cleanup);
    res.on('close', cleanup);
  }
}

// ---- helpers ----------------------------------------------------------------------------------------------

function typeOf(obj: KubeObj): ResourceType {
  const rt = Object.values(RESOURCE_TYPES).find((t) => t.kind === obj.kind && apiVersionOf(t) === obj.apiVersion);
  if (!rt) throw new Error(`fake API server does not serve ${obj.apiVersion} ${obj.kind}`);
  return rt;
}
