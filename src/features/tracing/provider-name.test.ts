import { describe, expect, it } from 'vitest';
import type { BackendAuth } from '../../model/backend-auth.js';
import { providerOf } from './provider-name.js';

const bearer: BackendAuth = { kind: 'bearer', key: 'k' };
const plain = { auth: bearer, pathStyle: 'openai' as const, basePath: '/v1', api: 'openai' as const };

describe('gen_ai.provider.name of a backend', () => {
  it.each([
    ['api.openai.com', 'openai'],
    ['my-resource.openai.azure.com', 'azure.ai.openai'],
    ['my-resource.cognitiveservices.azure.com', 'azure.ai.openai'],
    ['my-project.services.ai.azure.com', 'azure.ai.inference'],
    ['bedrock-runtime.us-east-1.amazonaws.com', 'aws.bedrock'],
    ['vpce-0a1b2c.bedrock-runtime.us-east-1.vpce.amazonaws.com', 'aws.bedrock'],
    ['bedrock-mantle.us-east-1.api.aws', 'aws.bedrock'],
    ['us-central1-aiplatform.googleapis.com', 'gcp.vertex_ai'],
    ['aiplatform.googleapis.com', 'gcp.vertex_ai'],
    ['generativelanguage.googleapis.com', 'gcp.gemini'],
    ['api.anthropic.com', 'anthropic'],
    ['API.Mistral.AI', 'mistral_ai'],
    ['api.groq.com', 'groq'],
    ['api.deepseek.com', 'deepseek'],
    ['api.x.ai', 'x_ai'],
    ['us-south.ml.cloud.ibm.com', 'ibm.watsonx.ai'],
  ])('%s is %s', (host, provider) => {
    expect(providerOf(host, plain)).toBe(provider);
  });

  it('names an unknown host by its credential or path layout, else openai (the API the gateway speaks to it)', () => {
    expect(providerOf('vllm.inference.svc', plain)).toBe('openai');
    expect(providerOf('127.0.0.1', plain)).toBe('openai');
    expect(providerOf('s3.amazonaws.com', plain)).toBe('openai');
    expect(providerOf('s3.us-east-1.api.aws', plain)).toBe('openai');
    expect(providerOf('proxy.corp', { ...plain, pathStyle: 'azureDeployments' })).toBe('azure.ai.openai');
    expect(providerOf('proxy.corp', { ...plain, auth: { kind: 'awsSigV4', region: 'us-east-1', service: 'bedrock', keys: undefined } })).toBe('aws.bedrock');
    const gcp = { ...plain, auth: { kind: 'gcp', serviceAccountKey: undefined, scopes: [] } as const };
    expect(providerOf('proxy.corp', gcp)).toBe('gcp.gen_ai');
    // Claude on Vertex (the publisher's models) through a Private Service Connect endpoint.
    expect(providerOf('p.corp', { ...gcp, basePath: '/v1/projects/p/locations/us-east5/publishers/anthropic/models' })).toBe('gcp.vertex_ai');
    expect(providerOf('fake-anthropic.local', { ...plain, api: 'anthropic' })).toBe('anthropic');
  });
});
