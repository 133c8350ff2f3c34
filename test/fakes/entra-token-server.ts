// A fake Microsoft Entra ID token service, checking what Entra checks and issuing opaque access tokens that expire.
// It is reached the way a pod behind an egress proxy reaches the real one: the Azure SDK's HTTP pipeline honours
// HTTPS_PROXY, and this fake is that proxy too. A CONNECT to a real authority host (login.microsoftonline.com,
// login.microsoftonline.us) is tunnelled to the fake's own TLS server, whose certificate names those hosts and is
// trusted by the test (tls-cert.ts), so the identity library runs unchanged, authority host and all.
// Why not `authorityHost: https://localhost:<port>`: for a host it does not know, MSAL first asks the real
// login.microsoftonline.com for instance discovery, and Entra answers invalid_instance (AADSTS50049) for such a host.
// What MSAL (@azure/msal-node 7, inside @azure/identity 4) sends, for both known hosts: no discovery at all (their
// metadata is built in), only POST /{tenant}/oauth2/v2.0/token, form-encoded, grant_type=client_credentials,
// client_id, scope, and client_secret or client_assertion + client_assertion_type (workload identity).
// The discovery endpoints are answered as Entra does anyway, should a library version ask for them.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TestCert } from '../support/tls-cert.js';

/** The authority hosts the fake stands in for (the certificate must name them). */
const ENTRA_HOSTS = ['login.microsoftonline.com', 'login.microsoftonline.us'] as const;

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** An app registration: a client secret, or a federated credential (the service-account token of workload identity). */
export interface EntraApp {
  readonly tenantId: string;
  readonly clientId: string;
  /** The secret Entra accepts now (a test changes it to make the gateway's one invalid). */
  secret?: string;
  /** The federated token Entra accepts as client_assertion. */
  federatedToken?: string;
}

interface EntraTokenRequest {
  readonly method: string;
  /** The authority host the client asked for (Host header through the tunnel). */
  readonly host: string;
  readonly pathname: string;
  readonly form: URLSearchParams;
}

interface IssuedEntraToken {
  readonly token: string;
  /** Epoch milliseconds: the token is refused from then on. */
  readonly expiresAt: number;
  readonly issuedAt: number;
  readonly host: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly scope: string;
  readonly via: 'secret' | 'assertion';
}

export interface EntraTokenServer {
  /** For HTTPS_PROXY: the Azure SDK's requests to the authority hosts come here. */
  readonly proxyURL: string;
  readonly apps: EntraApp[];
  /** Every request to the token service, in order. */
  readonly requests: EntraTokenRequest[];
  readonly issued: IssuedEntraToken[];
  /** Token requests refused, with the Entra error code and description. */
  readonly refusals: Array<{ error: string; description: string }>;
  /** Token requests received (granted or not). */
  tokenRequests(): number;
  /** expires_in of the next tokens (default 3599 s, as Entra gives). */
  lifetimeSeconds: number;
  /** Parks token requests (already received ones included) until the returned release is called. */
  hold(): () => void;
  /** Why a resource server would refuse `Authorization: Bearer <token>` now, or undefined when it is valid. */
  reject(token: string | undefined, expected: { tenantId: string; clientId: string; scope?: string }): string | undefined;
  close(): Promise<void>;
}

export async function startEntraTokenServer(o: { tls: TestCert; apps: EntraApp[] }): Promise<EntraTokenServer> {
  const requests: EntraTokenRequest[] = [];
  const issued: IssuedEntraToken[] = [];
  const refusals: EntraTokenServer['refusals'] = [];
  const state = { lifetimeSeconds: 3599, held: undefined as Array<() => void> | undefined };

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const host = (req.headers.host ?? '').replace(/:443$/, '');
    const url = new URL(req.url ?? '/', `https://${host}`);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    requests.push({ method: req.method ?? '', host, pathname: url.pathname, form });

    if (req.method === 'GET' && url.pathname === '/common/discovery/instance') {
      // Instance discovery: Entra vouches only for its own clouds.
      const endpoint = url.searchParams.get('authorization_endpoint') ?? '';
      const asked = URL.canParse(endpoint) ? new URL(endpoint).host : '';
      if (!(ENTRA_HOSTS as readonly string[]).includes(asked))
        return send(400, { error: 'invalid_instance', error_description: 'AADSTS50049: Unknown or invalid instance.' });
      return send(200, {
        tenant_discovery_endpoint: `https://${asked}/common/v2.0/.well-known/openid-configuration`,
        'api-version': '1.1',
        metadata: ENTRA_HOSTS.map((h) => ({ preferred_network: h, preferred_cache: h, aliases: [h] })),
      });
    }
    const discovery = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    if (req.method === 'GET' && discovery) {
      const tenant = discovery[1]!;
      if (!o.apps.some((a) => a.tenantId === tenant)) return send(400, entraError('invalid_tenant', `AADSTS90002: Tenant '${tenant}' not found.`));
      const base = `https://${host}/${tenant}`;
      return send(200, {
        token_endpoint: `${base}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        jwks_uri: `https://${host}/${tenant}/discovery/v2.0/keys`,
        issuer: `https://${host}/${tenant}/v2.0`,
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      });
    }
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (req.method !== 'POST' || !token) return send(404, entraError('not_found', `AADSTS90000: no endpoint ${req.method} ${url.pathname}`));

    const parked = state.held;
    if (parked) await new Promise<void>((r) => parked.push(r));
    const outcome = grant(o.apps, token[1]!, form);
    if ('error' in outcome) {
      refusals.push({ error: outcome.error, description: outcome.description });
      return send(outcome.status, entraError(outcome.error, outcome.description));
    }
    const issuedAt = Date.now();
    const t: IssuedEntraToken = {
      token: `entra-fake-${randomBytes(24).toString('base64url')}`,
      issuedAt,
      expiresAt: issuedAt + state.lifetimeSeconds * 1000,
      host,
      tenantId: outcome.app.tenantId,
      clientId: outcome.app.clientId,
      scope: outcome.scope,
      via: outcome.via,
    };
    issued.push(t);
    return send(200, { token_type: 'Bearer', expires_in: state.lifetimeSeconds, ext_expires_in: state.lifetimeSeconds, access_token: t.token });
  };

  const tlsServer = createHttps({ key: o.tls.key, cert: o.tls.cert }, handler);
  tlsServer.listen(0, '127.0.0.1');
  await once(tlsServer, 'listening');
  const tlsPort = (tlsServer.address() as AddressInfo).port;

  // The egress proxy: tunnels to the authority hosts only (nothing reaches the internet), everything else refused.
  const tunnels = new Set<Socket>();
  const proxy: Server = createHttp((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    client.on('error', () => client.destroy());
    const [host, port] = (req.url ?? '').split(':');
    if (!(ENTRA_HOSTS as readonly string[]).includes(host ?? '') || port !== '443') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(tlsPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(upstream);
    upstream.on('close', () => tunnels.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');

  return {
    proxyURL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    apps: o.apps,
    requests,
    issued,
    refusals,
    tokenRequests: () => requests.filter((r) => r.method === 'POST' && r.pathname.endsWith('/oauth2/v2.0/token')).length,
    get lifetimeSeconds() {
      return state.lifetimeSeconds;
    },
    set lifetimeSeconds(v: number) {
      state.lifetimeSeconds = v;
    },
    hold() {
      const parked: Array<() => void> = [];
      state.held = parked;
      return () => {
        state.held = undefined;
        for (const release of parked) release();
      };
    },
    reject(token, expected) {
      if (token === undefined) return 'no bearer token';
      const t = issued.find((i) => i.token === token);
      if (!t) return 'not a token this Entra issued';
      // Checked at the moment the request arrives: a token sent after its expiry is refused, as Azure OpenAI does.
      if (Date.now() >= t.expiresAt) return `token expired ${Date.now() - t.expiresAt} ms ago`;
      if (t.tenantId !== expected.tenantId) return `token of tenant ${t.tenantId}`;
      if (t.clientId !== expected.clientId) return `token of client ${t.clientId}`;
      if (t.scope !== (expected.scope ?? COGNITIVE_SERVICES_SCOPE)) return `token for scope ${t.scope}`;
      return undefined;
    },
    async close() {
      for (const s of tunnels) s.destroy();
      proxy.closeAllConnections();
      tlsServer.closeAllConnections();
      await Promise.all([new Promise<void>((r) => proxy.close(() => r())), new Promise<void>((r) => tlsServer.close(() => r()))]);
    },
  };
}

function entraError(error: string, description: string) {
  return { error, error_description: description, error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)], timestamp: new Date().toISOString() };
}

type Grant = { app: EntraApp; scope: string; via: 'secret' | 'assertion' } | { status: number; error: string; description: string };

/** The client-credentials grant as Entra judges it: tenant, grant type, application, its credential, the scope. */
function grant(apps: readonly EntraApp[], tenant: string, form: URLSearchParams): Grant {
  if (!apps.some((a) => a.tenantId === tenant)) return { status: 400, error: 'invalid_request', description: `AADSTS90002: Tenant '${tenant}' not found.` };
  if (form.get('grant_type') !== 'client_credentials')
    return {
      status: 400,
      error: 'unsupported_grant_type',
      description: `AADSTS70003: The app requested an unsupported grant type '${form.get('grant_type')}'.`,
    };
  const clientId = form.get('client_id') ?? '';
  const app = apps.find((a) => a.tenantId === tenant && a.clientId === clientId);
  if (!app)
    return {
      status: 400,
      error: 'unauthorized_client',
      description: `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${tenant}'.`,
    };
  let via: 'secret' | 'assertion';
  const secret = form.get('client_secret');
  const assertion = form.get('client_assertion');
  if (secret !== null) {
    if (app.secret === undefined || secret !== app.secret)
      return {
        status: 401,
        error: 'invalid_client',
        description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
      };
    via = 'secret';
  } else if (assertion !== null) {
    if (form.get('client_assertion_type') !== JWT_BEARER)
      return {
        status: 400,
        error: 'invalid_request',
        description: "AADSTS50027: client_assertion_type must be 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'.",
      };
    if (app.federatedToken === undefined || assertion !== app.federatedToken)
      return { status: 400, error: 'invalid_client', description: 'AADSTS70021: No matching federated identity record found for presented assertion.' };
    via = 'assertion';
  } else {
    return {
      status: 401,
      error: 'invalid_client',
      description: "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
    };
  }
  const scope = form.get('scope') ?? '';
  // The client-credentials flow takes exactly one resource's /.default scope; which resource is the resource
  // server's business (reject() checks the token was issued for Azure OpenAI's).
  if (!/^https:\/\/\S+\/\.default$/.test(scope))
    return {
      status: 400,
      error: 'invalid_scope',
      description: `AADSTS70011: The provided value for the input parameter 'scope' is not valid. The scope ${scope} is not valid.`,
    };
  return { app, scope, via };
}
