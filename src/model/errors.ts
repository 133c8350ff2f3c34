// OpenAI-shaped errors: {"error":{"message","type","param","code"}} with a JSON content type. Every error the
// gateway itself produces goes through here, so the shape and the codes stay consistent. Messages are built
// from constants and public names only (model ids, paths): never from keys, headers or upstream secrets.

/** OpenAI's error types; a 429 says which kind of limit it hit (`requests`, `tokens`) or `insufficient_quota`. */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'server_error' | 'requests' | 'tokens' | 'insufficient_quota';

export interface OpenAIErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

/** An error the gateway answers with; thrown or passed to next() anywhere in the request path. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(status: number, message: string, opts: { type?: ErrorType; code?: string | null; param?: string | null; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.type = opts.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
    this.headers = opts.headers;
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const errors = {
  invalidApiKey: () =>
    new GatewayError(401, 'Incorrect API key provided. Send a valid gateway key as "Authorization: Bearer <key>" or "x-api-key: <key>".', {
      code: 'invalid_api_key',
    }),
  notReady: () => new GatewayError(503, 'The gateway has not loaded its configuration yet; retry shortly.', { code: 'service_unavailable' }),
  modelNotFound: (model: string) => new GatewayError(404, `The model \`${truncate(model)}\` does not exist.`, { code: 'model_not_found', param: 'model' }),
  modelNotAllowed: (model: string) =>
    new GatewayError(403, `Your API key is not allowed to use the model \`${truncate(model)}\`.`, {
      code: 'model_not_allowed',
      param: 'model',
    }),
  familyNotServed: (model: string, path: string) =>
    new GatewayError(404, `The model \`${truncate(model)}\` is not served on ${path}.`, {
      code: 'unsupported_endpoint',
      param: 'model',
    }),
  malformedJson: () => new GatewayError(400, 'The request body is not valid JSON.', { code: 'invalid_json' }),
  nestedTooDeeply: (maxDepth: number) =>
    new GatewayError(400, `The request body is nested too deeply (more than ${maxDepth} levels).`, { code: 'invalid_json' }),
  unsupportedEncoding: () =>
    new GatewayError(415, 'Compressed request bodies (Content-Encoding) are not supported; send the body uncompressed.', {
      code: 'unsupported_content_encoding',
    }),
  notAnObject: () => new GatewayError(400, 'The request body must be a JSON object.', { code: 'invalid_json' }),
  malformedMultipart: (detail?: string) =>
    new GatewayError(400, `The multipart request body could not be parsed${detail ? `: ${detail}` : ''}.`, { code: 'invalid_multipart' }),
  duplicateModel: () => new GatewayError(400, 'The model parameter must be given only once.', { code: 'invalid_request', param: 'model' }),
  missingModel: () => new GatewayError(400, 'You must provide a model parameter.', { code: 'missing_required_parameter', param: 'model' }),
  tooLarge: (limit: number) => new GatewayError(413, `The request body exceeds the limit of ${limit} bytes.`, { code: 'request_too_large' }),
  bodyBudgetFull: (retryAfterSeconds: number) =>
    new GatewayError(503, 'The gateway is holding too many request bodies in memory right now; retry shortly.', {
      code: 'server_overloaded',
      // The SDKs retry a 503 after retry-after.
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  unsupportedContentType: (contentType: string, path: string) =>
    new GatewayError(
      415,
      `Unsupported content type: '${truncate(contentType.split(';')[0]!.trim())}'. ${truncate(path)} only accepts 'application/json' requests.`,
      {
        code: 'unsupported_content_type',
      },
    ),
  unknownRoute: (method: string, path: string) => new GatewayError(404, `Unknown request URL: ${method} ${truncate(path)}.`, { code: 'unknown_url' }),
  methodNotAllowed: (method: string, path: string, allow: readonly string[]) =>
    new GatewayError(405, `Method ${method} is not allowed on ${truncate(path)}; allowed: ${allow.join(', ')}.`, {
      code: 'method_not_allowed',
      headers: { allow: allow.join(', ') },
    }),
  upstreamUnreachable: () => new GatewayError(502, 'The upstream for this model could not be reached.', { code: 'upstream_unreachable' }),
  upstreamTimeout: () => new GatewayError(504, 'The upstream for this model did not answer in time.', { code: 'upstream_timeout' }),
  upstreamFailed: () => new GatewayError(502, 'The upstream for this model failed before answering.', { code: 'upstream_error' }),
  upstreamCredentialRefused: (model: string, backend: string) =>
    new GatewayError(
      502,
      `Backend "${truncate(backend)}" of model "${truncate(model)}" refused the gateway's own credential for it (401); your key is fine, the gateway's operator must fix the backend's.`,
      { code: 'upstream_credentials', headers: { 'x-should-retry': 'false' } },
    ),
  upstreamRedirect: (model: string) =>
    new GatewayError(502, `The upstream of model "${truncate(model)}" answered with a redirect, which the gateway does not follow.`, {
      code: 'upstream_error',
    }),
  upstreamEncoding: (model: string) =>
    new GatewayError(
      502,
      `The upstream of model "${truncate(model)}" sent a compressed answer (Content-Encoding) the gateway cannot decode; it asks upstreams for identity.`,
      {
        code: 'upstream_error',
      },
    ),
  internal: () => new GatewayError(500, 'The gateway failed to handle the request.', { code: 'internal_error' }),
};

function truncate(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** Maps anything thrown in a handler to a GatewayError; unknown errors become a generic 500 (no detail leaks). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { type?: unknown; status?: unknown; expose?: unknown } | null;
  // express/body-parser style errors (e.g. from a router-level parser) carry a status.
  if (e && e.type === 'entity.too.large') return new GatewayError(413, 'The request body exceeds the limit.', { code: 'request_too_large' });
  if (e && e.type === 'entity.parse.failed') return errors.malformedJson();
  // express's own client errors (e.g. a path parameter that is not valid percent-encoding) carry a 4xx status.
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new GatewayError(e.status, 'The request could not be understood.', { code: 'invalid_request' });
  }
  return errors.internal();
}
