// A provider's error body reaches an OpenAI client with the provider's message, through the official openai SDK:
// Bedrock's {"message"} / {"Message"} (its kind in x-amzn-ErrorType), Vertex's [{"error":{…,"status"}}], Azure API
// Management's {"statusCode","message"}; retold in OpenAI's shape (which older SDKs and other languages' need), also
// as the error event of a stream whose 200 the keep-alives already sent; the backend's credential masked in it.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderRefusal, startProviderUpstream } from '../fakes/provider-upstream.js';
import { ALICE_KEY, startGateway } from '../helpers/gateway.js';
import { clientManifests } from './recipe-setup.js';

const AWS = { AWS_ACCESS_KEY_ID: 'AKIAERRORTEST0000001', AWS_SECRET_ACCESS_KEY: 'error/test/secret/0123456789abcdefghijk' };
const saved = Object.fromEntries(Object.keys(AWS).map((k) => [k, process.env[k]]));
beforeAll(() => {
  Object.assign(process.env, AWS, { AWS_EC2_METADATA_DISABLED: 'true' });
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const EXPIRED = 'Signature expired: 20260101T000000Z is now earlier than 20260101T000500Z (20260101T001000Z - 5 min.)';
const UPSTREAM_KEY = 'sk-upstream-error-test-0123456789abcdef';

function route(backend: string, extra = ''): string {
  return `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: cloud}
spec:
  model: cloud-model
  backends:
  - ${backend}
${extra}---
apiVersion: v1
kind: Secret
metadata: {name: upstream-credentials}
stringData: {apiKey: ${UPSTREAM_KEY}}
---
${clientManifests()}`;
}

/** The error the openai SDK throws for one chat completion (a stream is read to its end). */
async function sdkError(client: OpenAI, stream = false): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    const answer = await client.chat.completions.create({ model: 'cloud-model', messages: [{ role: 'user', content: 'hi' }], stream });
    if (stream) for await (const _ of answer as AsyncIterable<unknown>);
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  throw new Error('no error');
}

async function withProvider(
  status: number,
  refusal: ProviderRefusal,
  backend: (origin: string) => string,
  test: (client: OpenAI, baseURL: string) => Promise<void>,
  extra = '',
) {
  const provider = await startProviderUpstream(() => 'refused', status, refusal);
  const gw = await startGateway(route(backend(provider.origin), extra));
  try {
    await test(gw.client(), gw.baseURL);
  } finally {
    await gw.close();
    await provider.close();
  }
}

const bedrock = (origin: string) => `{name: bedrock, baseURL: "${origin}/openai/v1", auth: {awsSigV4: {region: us-east-1}}}`;
const keyed = (origin: string) => `{name: azure, baseURL: "${origin}/openai/v1", apiKeySecretRef: {name: upstream-credentials, key: apiKey}}`;
const amzn = (kind: string) => ({ 'x-amzn-errortype': `${kind}:http://internal.amazon.com/coral/com.amazon.coral.service/` });

describe('provider error bodies told to an OpenAI client', () => {
  it("Bedrock's 403 {message}: the SDK's err.message is Bedrock's, its code AWS's error kind, the body OpenAI's shape", async () => {
    await withProvider(
      403,
      () => ({ headers: amzn('InvalidSignatureException'), body: JSON.stringify({ message: EXPIRED }) }),
      bedrock,
      async (client, baseURL) => {
        const err = await sdkError(client);
        expect(err.status).toBe(403);
        expect(err.message).toBe(`403 ${EXPIRED}`);
        expect(err.code).toBe('InvalidSignatureException');
        expect(err.type).toBe('invalid_request_error');
        // What an SDK that reads only {"error":{…}} gets (older openai-node, other languages).
        const res = await fetch(`${baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'cloud-model', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const text = await res.text();
        expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text)); // the retold body's own length
        expect(JSON.parse(text)).toEqual({ error: { message: EXPIRED, type: 'invalid_request_error', param: null, code: 'InvalidSignatureException' } });
      },
    );
  });

  it("Bedrock's capital {Message}, streamed or not", async () => {
    await withProvider(
      400,
      () => ({ headers: amzn('ValidationException'), body: JSON.stringify({ Message: 'Malformed input request: #: extraneous key [foo]' }) }),
      bedrock,
      async (client) => {
        for (const stream of [false, true]) {
          const err = await sdkError(client, stream);
          expect(err.message).toBe('400 Malformed input request: #: extraneous key [foo]');
          expect(err.code).toBe('ValidationException');
        }
      },
    );
  });

  it('a stream whose 200 the keep-alives sent: the error event carries Bedrock’s message', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const refusal: ProviderRefusal = async () => {
      await released; // answered once the client holds the 200 the keep-alives committed
      return { headers: amzn('InvalidSignatureException'), body: JSON.stringify({ message: EXPIRED }) };
    };
    await withProvider(
      403,
      refusal,
      bedrock,
      async (client) => {
        const stream = await client.chat.completions.create({ model: 'cloud-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
        release();
        const failure = await (async () => {
          for await (const _ of stream);
        })().then(
          () => undefined,
          (e: Error) => e,
        );
        expect(failure?.message).toContain(EXPIRED);
      },
      '  streaming: {keepAliveInterval: 20ms}\n',
    );
  });

  it("Vertex's [{error: {code, message, status}}]: the message, and Google's status as the code", async () => {
    const body = JSON.stringify([{ error: { code: 403, message: 'Permission denied on resource project p.', status: 'PERMISSION_DENIED' } }]);
    await withProvider(
      403,
      () => ({ body }),
      keyed,
      async (client) => {
        const err = await sdkError(client);
        expect(err.message).toBe('403 Permission denied on resource project p.');
        expect(err.code).toBe('PERMISSION_DENIED');
      },
    );
  });

  it("Google's and Azure's {error: {message}} pass through unchanged (the SDKs read them already)", async () => {
    const google = { error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED' } };
    await withProvider(
      429,
      () => ({ body: JSON.stringify(google) }),
      keyed,
      async (client) => {
        const err = await sdkError(client);
        expect(err.message).toBe('429 Resource exhausted.');
        expect(err.error).toEqual(google.error);
      },
    );
  });

  it("Azure API Management's {statusCode, message}, with the backend's key it quotes masked", async () => {
    const body = JSON.stringify({ statusCode: 429, message: `Rate limit is exceeded for key ${UPSTREAM_KEY}. Try again in 1 seconds.` });
    await withProvider(
      429,
      () => ({ body }),
      keyed,
      async (client) => {
        const err = await sdkError(client);
        expect(err.message).toBe(`429 Rate limit is exceeded for key ${'*'.repeat(UPSTREAM_KEY.length)}. Try again in 1 seconds.`);
        expect(err.code).toBe('rate_limit_exceeded');
        expect(err.message).not.toContain(UPSTREAM_KEY);
      },
    );
  });

  it('a body without a message (an HTML page) passes through as it came', async () => {
    await withProvider(
      403,
      () => ({ headers: { 'content-type': 'text/html' }, body: '<html><body>Forbidden</body></html>' }),
      keyed,
      async (client) => {
        const err = await sdkError(client);
        expect(err.message).toBe('403 <html><body>Forbidden</body></html>');
      },
    );
  });
});
