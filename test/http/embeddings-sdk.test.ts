// Embeddings as the official SDK sends them beyond a float vector of one string (families.test.ts): the node SDK's
// default base64 encoding, decoded by the SDK, `dimensions`, inputs of token arrays, a batch of 2,048 inputs (the
// API's maximum), and the usage and cost recorded for each. The fake answers as OpenAI's API does: base64 of
// little-endian float32s when asked, vectors cut to `dimensions`, usage.prompt_tokens the tokens of every input.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../fakes/loopback.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

interface EmbeddingsBody {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
}

const FULL_DIMENSIONS = 1536;
const bodies: EmbeddingsBody[] = [];
let gw: TestGateway;
let closeUpstream: () => Promise<void>;

/** The vector the fake makes for input `i`: deterministic, so the client's decoded floats can be compared. */
const vector = (i: number, dims: number) => Array.from({ length: dims }, (_, d) => Math.fround(Math.sin(i * 7 + d) / 3));

/** Inputs as OpenAI reads them: a string, or a token array, or a list of either. */
function inputsOf(input: EmbeddingsBody['input']): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as (string | number[])[];
}

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as EmbeddingsBody;
    bodies.push(body);
    const inputs = inputsOf(body.input);
    const send = (status: number, value: object) => {
      const text = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (inputs.length > 2048) return send(400, { error: { message: "'$.input' is invalid.", type: 'invalid_request_error', param: null, code: null } });
    const dims = body.dimensions ?? FULL_DIMENSIONS;
    const data = inputs.map((_, i) => {
      const v = vector(i, dims);
      const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
      return { object: 'embedding', index: i, embedding };
    });
    // A token is a token in an array; a string counts one token per four characters, as near as a fake needs.
    const tokens = inputs.reduce((n, x) => n + (typeof x === 'string' ? Math.ceil(x.length / 4) : x.length), 0);
    send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  const priced = `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: extra-embed}
spec:
  model: extra-embed
  endpoints: [embeddings]
  backends:
  - name: openai
    baseURL: ${upstream.origin}/v1
    apiKeySecretRef: {name: upstream-credentials, key: apiKey}
    model: text-embedding-3-large
    pricing: {inputPerMTok: "0.13"}
`;
  gw = await startGateway(standardManifests(`${upstream.origin}/v1`, priced));
});
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

const recordOf = (response: Response) => gw.record(response.headers.get('x-request-id'));

describe('embeddings through the node SDK', () => {
  it('no encoding_format: the SDK asks for base64 and gets the floats back, the usage and cost recorded', async () => {
    const { data, response } = await gw
      .client()
      .embeddings.create({ model: 'extra-embed', input: ['first text', 'second'] })
      .withResponse();
    expect(bodies.at(-1)).toMatchObject({ model: 'text-embedding-3-large', encoding_format: 'base64' });
    expect(data.data.map((d) => d.index)).toEqual([0, 1]);
    for (const d of data.data) expect(Array.from(d.embedding)).toEqual(vector(d.index, FULL_DIMENSIONS));
    expect(data.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    // 5 tokens at 0.13 per million: 0.65 micro-units, rounded half up once.
    expect(await recordOf(response)).toMatchObject({ family: 'embeddings', inputTokens: 5, outputTokens: 0, estimated: false, cost: '0.000001' });
  });

  it('dimensions reach the upstream, and the shortened vectors come back decoded', async () => {
    const e = await gw.client().embeddings.create({ model: 'text-embedding-3-small', input: 'short', dimensions: 256 });
    expect(bodies.at(-1)).toMatchObject({ dimensions: 256, encoding_format: 'base64' });
    expect(e.data[0]!.embedding).toHaveLength(256);
    expect(Array.from(e.data[0]!.embedding)).toEqual(vector(0, 256));
  });

  it('inputs of token arrays, one and several, pass as the integers they are; their tokens are the usage', async () => {
    const one = await gw
      .client()
      .embeddings.create({ model: 'text-embedding-3-small', input: [1, 2, 3, 100_276], encoding_format: 'float' })
      .withResponse();
    expect(bodies.at(-1)!.input).toEqual([1, 2, 3, 100_276]);
    expect(one.data.data).toHaveLength(1);
    expect(await recordOf(one.response)).toMatchObject({ inputTokens: 4, estimated: false });
    const many = await gw
      .client()
      .embeddings.create({
        model: 'text-embedding-3-small',
        input: [
          [9, 8],
          [7, 6, 5],
        ],
      })
      .withResponse();
    expect(bodies.at(-1)!.input).toEqual([
      [9, 8],
      [7, 6, 5],
    ]);
    expect(many.data.data).toHaveLength(2);
    expect(await recordOf(many.response)).toMatchObject({ inputTokens: 5, estimated: false });
  });

  it('a batch of 2,048 inputs: every vector back in order, the whole batch counted once; 2,049 is the upstream’s 400', async () => {
    const inputs = Array.from({ length: 2048 }, (_, i) => `input number ${i}`);
    const { data, response } = await gw.client().embeddings.create({ model: 'extra-embed', input: inputs }).withResponse();
    expect(data.data).toHaveLength(2048);
    expect(data.data.every((d, i) => d.index === i && d.embedding.length === FULL_DIMENSIONS)).toBe(true);
    expect(Array.from(data.data[2047]!.embedding)).toEqual(vector(2047, FULL_DIMENSIONS));
    const tokens = inputs.reduce((n, x) => n + Math.ceil(x.length / 4), 0);
    expect(data.usage.prompt_tokens).toBe(tokens);
    const r = await recordOf(response);
    expect(r).toMatchObject({ inputTokens: tokens, estimated: false });
    expect(Number(r['cost'])).toBe(Math.round(tokens * 0.13) / 1e6);
    const err = await gw
      .client()
      .embeddings.create({ model: 'extra-embed', input: [...inputs, 'one more'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, message: "400 '$.input' is invalid." });
  });
});
