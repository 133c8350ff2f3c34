// An HTTP server that can be drained: stop accepting connections, let in-flight requests (long SSE streams
// included) finish up to a deadline, then cut whatever is left. Keep-alive connections are closed as soon as
// they go idle, and responses started during the drain ask the client to close the connection.
import { createServer, IncomingMessage, type RequestListener, type Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerClientError, answerMissingHost, lacksHost, type ProtocolAnswer } from './client-error.js';

export interface DrainResult {
  /** True when every in-flight request finished before the deadline. */
  readonly completed: boolean;
  /** Requests cut at the deadline. */
  readonly cut: number;
}

export interface DrainableServer {
  readonly server: Server;
  readonly address: AddressInfo;
  /** http://host:port (IPv6 hosts bracketed; 0.0.0.0 / :: shown as the address given). */
  readonly url: string;
  /** Requests whose response has not finished. */
  inFlight(): number;
  /** Requests received since the server started (a running count, for runtime/traffic-quiet.ts). */
  received(): number;
  /**
   * Graceful: stops accepting, waits up to timeoutMs for in-flight requests, then destroys the rest. Idempotent.
   * `endInFlight`, when given, is called at the deadline first, so the application can end what is still running
   * with an answer of its own (an error event that ends a stream); what it ends within CUT_GRACE_MS is not cut.
   */
  drain(timeoutMs: number, endInFlight?: () => void): Promise<DrainResult>;
}

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** Idle keep-alive time; longer than typical load balancer idle timeouts (60 s) so they close first. */
  readonly keepAliveTimeoutMs?: number;
  /** How long a client has to send the request line and headers (default keepAliveTimeoutMs + 1 s). */
  readonly headersTimeoutMs?: number;
  /**
   * How long a client has to send the whole request, body included (default 5 min, node's own default).
   * Bounds slow uploads (slowloris); waiting for the upstream and streaming the answer are not counted.
   */
  readonly requestTimeoutMs?: number;
  /**
   * The prototypes the handler gives every request and response (an express app's `request` and `response`): node
   * then creates them with these, and the handler's own `Object.setPrototypeOf` finds nothing to change. Changing
   * the prototype of a live request or response makes V8 rebuild its map, twice per request.
   */
  readonly prototypes?: { readonly request: IncomingMessage; readonly response: ServerResponse };
  /** Told of each request the server answered itself (node's parser refused it, or no Host), which the handler never logs. */
  readonly onProtocolAnswer?: (answer: ProtocolAnswer) => void;
  /** The id the handler gave a request still in progress: a 408 for its body too slow carries it, as its access line does. */
  readonly requestIdOf?: (res: ServerResponse) => string | undefined;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;
/** How long responses ended at the drain deadline by `endInFlight` have to be written before connections are cut. */
const CUT_GRACE_MS = 1_000;

export async function listenDrainable(handler: RequestListener, options: ListenOptions): Promise<DrainableServer> {
  let draining = false;
  let inFlight = 0;
  let received = 0;
  // The response in progress on each connection, so a protocol error never writes over one that started, and so a
  // drain can ask each busy connection to close after its response.
  const responding = new WeakMap<Socket, ServerResponse>();
  const connections = new Set<Socket>();
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(options.headersTimeoutMs ?? keepAliveTimeout + 1_000, requestTimeout);
  const server = createServer(
    {
      keepAliveTimeout,
      headersTimeout,
      requestTimeout,
      // Node checks both timeouts on this interval (30 s by default); check often enough for short ones too.
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(Math.min(headersTimeout, requestTimeout) / 4))),
      // Node would answer a request without Host with a bare 400; it is answered below in the gateway's shape.
      requireHostHeader: false,
      ...(options.prototypes ? withPrototypes(options.prototypes) : {}),
    },
    (req, res) => {
      inFlight++;
      received++;
      responding.set(req.socket, res);
      // on(): 'close' comes once, and once() would wrap the listener in two more objects per request.
      res.on('close', () => {
        inFlight--;
        if (responding.get(req.socket) === res) responding.delete(req.socket);
      });
      if (draining) res.setHeader('connection', 'close');
      if (lacksHost(req)) options.onProtocolAnswer?.(answerMissingHost(req, res));
      else handler(req, res);
    },
  );
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const inHandler = responding.get(socket as Socket);
    const id = inHandler && options.requestIdOf?.(inHandler);
    const answer = answerClientError(err, socket, inHandler?.headersSent === true, ...(id ? [id] : []));
    // A request the handler has (a body too slow: 408) gets its access line from the handler.
    if (answer && inHandler === undefined) options.onProtocolAnswer?.(answer);
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let drained: Promise<DrainResult> | undefined;

  // Decided when its head is written (node writes every head through writeHead), not at the drain: a request
  // pipelined behind it meanwhile must still be answered, and the socket then closes after that one.
  const closeAfter = (res: ServerResponse, socket: Socket) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      if (responding.get(socket) === res) res.setHeader('connection', 'close');
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
  };

  const drain = (timeoutMs: number, endInFlight?: () => void): Promise<DrainResult> => {
    drained ??= new Promise<DrainResult>((resolve) => {
      draining = true;
      let finished = false;
      /** In flight at the deadline: what the drain did not let finish (ended by endInFlight, or cut). */
      let atDeadline: number | undefined;
      const closed = new Promise<void>((r) => server.close(() => r()));
      const finish = () => {
        if (finished) return;
        finished = true;
        clearInterval(sweep);
        clearTimeout(deadline);
        clearTimeout(grace);
        server.closeAllConnections();
        resolve({ completed: !atDeadline, cut: atDeadline ?? 0 });
      };
      // A response not yet begun (waiting for its upstream) says `connection: close`, so the client does not send its
      // next request on a socket the drain closes (a POST cut that way is ambiguous to retry); a response already
      // under way cannot say it, and its socket is closed once idle.
      for (const socket of connections) {
        const res = responding.get(socket);
        if (res && !res.headersSent) closeAfter(res, socket);
      }
      // Sockets go idle when their last response ends; close them promptly rather than after keepAliveTimeout.
      server.closeIdleConnections();
      const sweep = setInterval(() => {
        server.closeIdleConnections();
        if (atDeadline !== undefined && inFlight === 0) finish(); // everything ended at the deadline is written
      }, 50);
      let grace: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        atDeadline = inFlight;
        if (inFlight === 0 || !endInFlight) return finish();
        endInFlight();
        grace = setTimeout(finish, CUT_GRACE_MS);
      }, timeoutMs);
      void closed.then(finish);
    });
    return drained;
  };

  return { server, address, url: `http://${host}:${address.port}`, inFlight: () => inFlight, received: () => received, drain };
}

/**
 * Node's request and response constructors, making objects with the given prototypes (which must inherit from
 * node's own: express's do). Each builds its object with node's constructor and itself as `new.target`, as a
 * subclass would: V8 then derives the object's map from node's constructor, with as many in-object fields. (A plain
 * wrapper calling node's constructor on its own `this` made objects with few in-object fields, which then went into
 * dictionary mode, costing more per request than the prototype change it avoided.)
 */
function withPrototypes(p: { readonly request: IncomingMessage; readonly response: ServerResponse }) {
  if (!(p.request instanceof IncomingMessage) || !(p.response instanceof ServerResponse)) throw new TypeError('prototypes must inherit from node:http');
  function Request(socket: Socket): IncomingMessage {
    return Reflect.construct(IncomingMessage, [socket], Request) as IncomingMessage;
  }
  Request.prototype = p.request;
  // Node passes its options (highWaterMark, …) as a second argument.
  function Response(req: IncomingMessage, options: object): ServerResponse {
    return Reflect.construct(ServerResponse, [req, options], Response) as ServerResponse;
  }
  Response.prototype = p.response;
  return { IncomingMessage: Request as unknown as typeof IncomingMessage, ServerResponse: Response as unknown as typeof ServerResponse };
}
