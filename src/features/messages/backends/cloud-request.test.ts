// The Vertex and Bedrock layouts of a Messages call, and which backends get them.
import { describe, expect, it } from 'vitest';
import type { BackendAuth } from '../../../model/backend-auth.js';
import { bedrockClaudeRequest } from './bedrock-claude.js';
import { claudeCloudOf, claudeCloudRequest } from './claude-cloud.js';
import type { ClaudeCall, CloudRequest } from './cloud-request.js';
import { vertexClaudeRequest } from './vertex-claude.js';

/** What a coding agent sends: thinking with its signature, cache_control, tools, an image, a document, metadata. */
const CLIENT_BODY = `{"model":"claude-sonnet","max_tokens":1024,"stream":true,
 "system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
 "messages":[{"role":"user","content":[{"type":"text","text":"hi"},
   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
   {"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"}}]},
  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqQBCkYIARgCIkBsig=="},
   {"type":"tool_use","id":"toolu_1","name":"ls","input":{"n":12345678901234567890}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}]}],
 "tools":[{"name":"ls","input_schema":{"type":"object"}}],
 "thinking":{"type":"enabled","budget_tokens":512},
 "metadata":{"user_id":"u-1"}}`;

/** The members the adapters must leave as the client wrote them, byte for byte. */
const KEPT = [
  '"system":[',
  '"messages":[',
  '"tools":[',
  '"thinking":{"type":"enabled","budget_tokens":512}',
  '"metadata":{"user_id":"u-1"}',
  '12345678901234567890',
];

const call = (o: Partial<ClaudeCall> = {}): ClaudeCall => ({
  operation: 'messages',
  body: Buffer.from(CLIENT_BODY),
  model: 'claude-sonnet-4-5@20250929',
  stream: true,
  headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14', 'user-agent': 'claude-cli' },
  betas: undefined,
  ...o,
});

const ok = (r: ReturnType<typeof vertexClaudeRequest>): CloudRequest => {
  if (!r.ok) throw new Error(`refused: ${r.error.error.message}`);
  return r.value;
};
const json = (r: CloudRequest) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;

describe('Claude on Vertex AI', () => {
  it('streams through :streamRawPredict with the model in the path and anthropic_version in the body', () => {
    const r = ok(vertexClaudeRequest(call()));
    expect(r.path).toBe('/claude-sonnet-4-5@20250929:streamRawPredict');
    const body = json(r);
    expect(body['model']).toBeUndefined();
    expect(body['anthropic_version']).toBe('vertex-2023-10-16');
    expect(body['stream']).toBe(true);
    const text = r.body.toString('utf8');
    for (const k of KEPT) expect(text).toContain(k);
    // The anthropic-version header means nothing there; the betas stay a header, where Vertex reads them.
    expect(r.dropHeaders).toEqual(['anthropic-version']);
    expect(r.setHeaders).toEqual({});
    expect(r.answer).toBe('anthropic');
  });

  it('answers JSON through :rawPredict; a client’s own anthropic_version is replaced', () => {
    const body = Buffer.from('{"anthropic_version":"bedrock-2023-05-31","model":"x","max_tokens":5,"messages":[]}');
    const r = ok(vertexClaudeRequest(call({ stream: false, body })));
    expect(r.path).toBe('/claude-sonnet-4-5@20250929:rawPredict');
    expect(json(r)).toEqual({ max_tokens: 5, messages: [], anthropic_version: 'vertex-2023-10-16' });
  });

  it('counts tokens at count-tokens:rawPredict with the upstream model in the body', () => {
    const r = ok(vertexClaudeRequest(call({ operation: 'count_tokens', stream: false })));
    expect(r.path).toBe('/count-tokens:rawPredict');
    expect(json(r)['model']).toBe('claude-sonnet-4-5@20250929');
    expect(json(r)['anthropic_version']).toBe('vertex-2023-10-16');
  });

  it('sends only the allowed betas in anthropic-beta when the backend lists them, and none when none is allowed', () => {
    const headers = { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14, context-1m-2025-08-07' };
    const r = ok(vertexClaudeRequest(call({ headers, betas: new Set(['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14']) })));
    expect(r.dropHeaders).toEqual(['anthropic-version', 'anthropic-beta']);
    expect(r.setHeaders).toEqual({ 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m-2025-08-07' });
    const none = ok(vertexClaudeRequest(call({ headers, betas: new Set() })));
    expect(none.dropHeaders).toEqual(['anthropic-version', 'anthropic-beta']);
    expect(none.setHeaders).toEqual({});
  });

  it('encodes what a path segment cannot hold, and refuses a body that is not an object', () => {
    expect(ok(vertexClaudeRequest(call({ model: 'a/b?c' }))).path).toBe('/a%2Fb%3Fc:streamRawPredict');
    const refused = vertexClaudeRequest(call({ body: Buffer.from('[1]') }));
    expect(refused).toMatchObject({ ok: false, status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
  });
});

describe('Claude on Amazon Bedrock (InvokeModel)', () => {
  const model = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

  it('streams through invoke-with-response-stream: model and stream out of the body, version and betas in', () => {
    const r = ok(bedrockClaudeRequest(call({ model })));
    // Encoded once here, as the AWS SDK puts a label on the wire; the signer encodes it once more.
    expect(r.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
    const body = json(r);
    expect(body['model']).toBeUndefined();
    expect(body['stream']).toBeUndefined();
    expect(body['anthropic_version']).toBe('bedrock-2023-05-31');
    expect(body['anthropic_beta']).toEqual(['interleaved-thinking-2025-05-14']);
    const text = r.body.toString('utf8');
    for (const k of KEPT) expect(text).toContain(k);
    expect(r.dropHeaders).toEqual(['anthropic-version', 'anthropic-beta']);
    expect(r.setHeaders).toEqual({ accept: 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-accept': 'application/json' });
    expect(r.answer).toBe('aws-event-stream');
  });

  it('answers JSON through invoke; no betas, no anthropic_beta', () => {
    const r = ok(bedrockClaudeRequest(call({ model, stream: false, headers: {} })));
    expect(r.path).toBe(`/model/${encodeURIComponent(model)}/invoke`);
    expect(json(r)['anthropic_beta']).toBeUndefined();
    expect(r.setHeaders).toEqual({ accept: 'application/json' });
    expect(r.answer).toBe('anthropic');
  });

  it('merges the betas of repeated headers, comma lists and a body’s own anthropic_beta, once each', () => {
    const body = Buffer.from('{"model":"m","anthropic_beta":["b2","b4"],"messages":[]}');
    const headers = { 'anthropic-beta': ['b1, b2', ' b3 ,', 'b1'] };
    expect(json(ok(bedrockClaudeRequest(call({ model, body, headers }))))['anthropic_beta']).toEqual(['b1', 'b2', 'b3', 'b4']);
  });

  it('keeps only the allowed betas, from the header and the body alike; an empty allow list sends no anthropic_beta', () => {
    const body = Buffer.from('{"model":"m","anthropic_beta":["b2","b4"],"messages":[]}');
    const headers = { 'anthropic-beta': 'claude-code-20250219, b1, b2' };
    expect(json(ok(bedrockClaudeRequest(call({ model, body, headers, betas: new Set(['b4', 'b1']) }))))['anthropic_beta']).toEqual(['b1', 'b4']);
    expect(json(ok(bedrockClaudeRequest(call({ model, body, headers, betas: new Set() }))))['anthropic_beta']).toBeUndefined();
  });

  it('puts an inference profile ARN in one path segment', () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3';
    expect(ok(bedrockClaudeRequest(call({ model: arn, stream: false }))).path).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/invoke',
    );
  });

  it('refuses token counting (InvokeModel has none) and a body that is not an object', () => {
    expect(bedrockClaudeRequest(call({ operation: 'count_tokens' }))).toMatchObject({ ok: false, status: 404, error: { error: { type: 'not_found_error' } } });
    expect(bedrockClaudeRequest(call({ body: Buffer.from('nope') }))).toMatchObject({ ok: false, status: 400 });
  });
});

describe('which cloud a Messages backend is', () => {
  const none: BackendAuth = { kind: 'none' };
  const gcp: BackendAuth = { kind: 'gcp', serviceAccountKey: undefined, scopes: [] };
  const sigv4: BackendAuth = { kind: 'awsSigV4', region: 'us-east-1', service: 'bedrock', keys: undefined };
  const backend = (url: string, auth: BackendAuth) => {
    const u = new URL(url);
    return { origin: u.origin, basePath: u.pathname.replace(/\/+$/, ''), auth };
  };

  it.each([
    ['https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models', gcp, 'vertex'],
    ['https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/', gcp, 'vertex'],
    ['http://127.0.0.1:9/v1/projects/p/locations/l/publishers/anthropic/models', none, 'vertex'],
    ['https://bedrock-runtime.us-east-1.amazonaws.com', sigv4, 'bedrock'],
    ['https://bedrock-runtime.eu-west-1.amazonaws.com', { kind: 'bearer', key: 'ABSK' } as BackendAuth, 'bedrock'],
    ['https://vpce-0a1b.bedrock-runtime.us-east-1.vpce.amazonaws.com', sigv4, 'bedrock'],
    ['http://127.0.0.1:9', sigv4, 'bedrock'],
    // Messages-shaped already: Bedrock's /anthropic endpoint, Anthropic's API, a proxy.
    ['https://bedrock-runtime.us-east-1.amazonaws.com/anthropic/v1', sigv4, undefined],
    ['https://api.anthropic.com/v1', { kind: 'header', header: 'x-api-key', key: 'k' } as BackendAuth, undefined],
    ['https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/endpoints/openapi', gcp, undefined],
    ['http://127.0.0.1:9', none, undefined],
  ])('%s is %s', (url, auth, cloud) => {
    expect(claudeCloudOf(backend(url, auth))).toBe(cloud);
  });

  it('lays the call out for the cloud named', () => {
    expect(ok(claudeCloudRequest('vertex', call())).path).toMatch(/:streamRawPredict$/);
    expect(ok(claudeCloudRequest('bedrock', call())).path).toMatch(/\/invoke-with-response-stream$/);
  });
});
