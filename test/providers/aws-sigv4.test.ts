// awsSigV4 with the pod's identity: no Secret, the AWS SDK's default credential chain finds the keys, as it would in
// a pod (environment variables; the container-credential endpoint EKS Pod Identity serves, with its session token).
// The fake Bedrock verifies every signature with the independent verifier. And a backend whose credentials cannot
// be found: 502 naming it, the reason kept for the route's status, and failover to the next backend.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProviderRequest, startProviderUpstream } from '../fakes/provider-upstream.js';
import { type SigV4Credentials, verifySigV4 } from '../fakes/sigv4-verifier.js';
import { ALICE_KEY, startGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { clientManifests } from './recipe-setup.js';

const CLIENT = `\n${clientManifests()}\n`;

const route = (backends: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: bedrock}
spec:
  model: gpt-oss
  backends:
${backends}
---${CLIENT}`;

/** The AWS variables a test sets; every other source of the chain is pointed at nothing, so the test is hermetic. */
const AWS_ENV = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_PROFILE',
];
const saved = Object.fromEntries(AWS_ENV.map((k) => [k, process.env[k]]));
function awsEnv(vars: Record<string, string>): void {
  for (const k of AWS_ENV) delete process.env[k];
  Object.assign(
    process.env,
    { AWS_CONFIG_FILE: '/nonexistent/config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials', AWS_EC2_METADATA_DISABLED: 'true' },
    vars,
  );
}
afterEach(() => {
  for (const k of AWS_ENV) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

function bedrockCheck(creds: SigV4Credentials) {
  return (r: ProviderRequest) => {
    const v = verifySigV4({ method: r.method, path: r.url, headers: r.headersDistinct, body: r.body }, (id) => (id === creds.accessKeyId ? creds : undefined));
    return v.ok ? undefined : v.reason;
  };
}

const ask = (gw: Awaited<ReturnType<typeof startGateway>>) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-oss', messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('awsSigV4 with the pod’s identity (the AWS SDK’s default chain)', () => {
  it('signs with keys from the environment, session token included', async () => {
    const creds = {
      accessKeyId: 'ASIAENVEXAMPLE000001',
      secretAccessKey: 'env/secret/key/0123456789abcdefghijklmn',
      sessionToken: 'env-session-token-0123456789',
    };
    awsEnv({ AWS_ACCESS_KEY_ID: creds.accessKeyId, AWS_SECRET_ACCESS_KEY: creds.secretAccessKey, AWS_SESSION_TOKEN: creds.sessionToken });
    const bedrock = await startProviderUpstream(bedrockCheck(creds));
    const gw = await startGateway(route(`    - {name: bedrock, baseURL: "${bedrock.origin}/openai/v1", auth: {awsSigV4: {region: us-east-1}}}`));
    try {
      const res = await gw.client().chat.completions.create({ model: 'gpt-oss', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]?.message.content).toBe('Hello there');
      expect(bedrock.refused).toEqual([]);
      expect(bedrock.requests[0]?.headers['x-amz-security-token']).toBe(creds.sessionToken);
      expect(gw.logText()).not.toContain(creds.secretAccessKey);
      expect(gw.logText()).not.toContain(creds.sessionToken);
    } finally {
      await gw.close();
      await bedrock.close();
    }
  });

  it('signs with the temporary keys of the container-credential endpoint (EKS Pod Identity), asked once', async () => {
    const creds = {
      accessKeyId: 'ASIAPODIDENTITY00001',
      secretAccessKey: 'pod/identity/secret/0123456789abcdefghij',
      sessionToken: 'pod-identity-session-0123456789',
    };
    let asked = 0;
    const agent: Server = createServer((req, res) => {
      // EKS Pod Identity's agent checks the pod's service-account token in Authorization.
      if (req.headers.authorization !== 'pod-sa-token') {
        res.writeHead(401).end();
        return;
      }
      asked++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          AccessKeyId: creds.accessKeyId,
          SecretAccessKey: creds.secretAccessKey,
          Token: creds.sessionToken,
          Expiration: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
    });
    agent.listen(0, '127.0.0.1');
    await once(agent, 'listening');
    awsEnv({
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/v1/credentials`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN: 'pod-sa-token',
    });
    const bedrock = await startProviderUpstream(bedrockCheck(creds));
    const gw = await startGateway(route(`    - {name: bedrock, baseURL: "${bedrock.origin}/openai/v1", auth: {awsSigV4: {region: us-east-1}}}`));
    try {
      for (let i = 0; i < 5; i++) expect((await ask(gw)).status).toBe(200);
      expect(bedrock.refused).toEqual([]);
      expect(bedrock.requests).toHaveLength(5);
      expect(asked).toBe(1); // cached by the SDK until near expiry, not fetched per request
    } finally {
      await gw.close();
      await bedrock.close();
      agent.close();
    }
  });

  it('no credentials anywhere: 502 naming the backend, the reason kept for the route’s status; the next backend serves', async () => {
    awsEnv({});
    const bedrock = await startProviderUpstream(() => 'unsigned');
    const fallback = await startProviderUpstream(() => undefined);
    const only = await startGateway(route(`    - {name: bedrock, baseURL: "${bedrock.origin}/openai/v1", auth: {awsSigV4: {region: us-east-1}}}`));
    const identities = only.identities;
    try {
      const res = await ask(only);
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('upstream_credentials');
      expect(body.error.message).toContain('Backend "bedrock" of model "gpt-oss" could not obtain its credential');
      expect(bedrock.requests).toEqual([]); // nothing unsigned was sent
      const problems = await waitUntil(() => (identities.problems().size > 0 ? identities.problems() : undefined), 5000, 'a recorded problem');
      expect([...problems.keys()]).toEqual(['default/bedrock/bedrock']);
      expect(problems.get('default/bedrock/bedrock')).toMatch(/credential/i);
      expect(only.logText()).toContain('a backend could not obtain its credential');
      // Its own outcome in the attempts metric, to alert on.
      expect(await only.metrics.registry.metrics()).toMatch(
        /^model_gateway_upstream_attempts_total\{backend="default\/bedrock\/bedrock",outcome="credentials"\} 1$/m,
      );
    } finally {
      await only.close();
    }
    const both = await startGateway(
      route(
        `    - {name: bedrock, baseURL: "${bedrock.origin}/openai/v1", auth: {awsSigV4: {region: us-east-1}}, priority: 0}\n    - {name: openai, baseURL: "${fallback.origin}/v1", priority: 1}`,
      ),
    );
    try {
      const res = await ask(both);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-model-gateway-backend')).toBe('openai');
      expect(res.headers.get('x-model-gateway-attempts')).toBe('2');
    } finally {
      await both.close();
      await bedrock.close();
      await fallback.close();
    }
  });
});
