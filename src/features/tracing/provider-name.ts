// gen_ai.provider.name of a backend (Required on GenAI client spans): the conventions' well-known value for the
// service it reaches, known from its host, the API it speaks (`anthropic` for a Messages API backend) or its
// credential; `openai` for any other, since the gateway speaks the OpenAI API to it (the conventions' flavor for an OpenAI-compatible endpoint). Pure; memoized per compiled backend.
import type { CompiledBackend } from '../../model/routing-table.js';

/** Host suffixes (a leading dot) or exact hosts, and the provider each one names; the first match wins. */
const HOSTS: readonly (readonly [host: string, provider: string])[] = [
  ['api.openai.com', 'openai'],
  ['.openai.azure.com', 'azure.ai.openai'],
  ['.cognitiveservices.azure.com', 'azure.ai.openai'],
  ['.services.ai.azure.com', 'azure.ai.inference'],
  ['.models.ai.azure.com', 'azure.ai.inference'],
  ['.inference.ai.azure.com', 'azure.ai.inference'],
  ['.amazonaws.com', 'aws.bedrock'],
  ['.api.aws', 'aws.bedrock'],
  ['aiplatform.googleapis.com', 'gcp.vertex_ai'],
  ['-aiplatform.googleapis.com', 'gcp.vertex_ai'],
  ['generativelanguage.googleapis.com', 'gcp.gemini'],
  ['api.anthropic.com', 'anthropic'],
  ['api.mistral.ai', 'mistral_ai'],
  ['api.groq.com', 'groq'],
  ['api.deepseek.com', 'deepseek'],
  ['api.x.ai', 'x_ai'],
  ['api.perplexity.ai', 'perplexity'],
  ['api.cohere.com', 'cohere'],
  ['api.cohere.ai', 'cohere'],
  ['api.moonshot.ai', 'moonshot_ai'],
  ['api.moonshot.cn', 'moonshot_ai'],
  ['.ml.cloud.ibm.com', 'ibm.watsonx.ai'],
];

/** The provider of a backend by host and credential: pure. */
export function providerOf(host: string, backend: Pick<CompiledBackend, 'auth' | 'pathStyle' | 'basePath' | 'api'>): string {
  const h = host.toLowerCase();
  for (const [pattern, provider] of HOSTS) {
    // An Amazon host names Bedrock only when it is Bedrock's (bedrock-runtime.<region>.amazonaws.com, a VPC endpoint's
    // vpce-….bedrock-runtime.<region>.vpce.amazonaws.com, bedrock-mantle.<region>.api.aws, …).
    if ((pattern === '.amazonaws.com' || pattern === '.api.aws') && !h.startsWith('bedrock') && !h.includes('.bedrock-runtime.')) continue;
    if (pattern.startsWith('.') || pattern.startsWith('-') ? h.endsWith(pattern) : h === pattern) return provider;
  }
  // A host of its own (a proxy, a private endpoint): the API it speaks, the credential or the path layout still tells.
  if (backend.api === 'anthropic') return 'anthropic';
  if (backend.pathStyle === 'azureDeployments') return 'azure.ai.openai';
  // Vertex's publisher models (Claude's …/publishers/anthropic/models) through a Private Service Connect endpoint.
  if (/\/publishers\/[^/]+\/models$/.test(backend.basePath)) return 'gcp.vertex_ai';
  const auth = backend.auth;
  if (auth.kind === 'awsSigV4' && auth.service === 'bedrock') return 'aws.bedrock';
  if (auth.kind === 'gcp') return 'gcp.gen_ai';
  return 'openai';
}

const providers = new WeakMap<CompiledBackend, string>();

/** providerOf for a compiled backend, made once per backend (a table is immutable). */
export function providerName(backend: CompiledBackend): string {
  let p = providers.get(backend);
  if (p === undefined) {
    p = providerOf(new URL(backend.origin).hostname, backend);
    providers.set(backend, p);
  }
  return p;
}
