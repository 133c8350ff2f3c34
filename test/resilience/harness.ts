// Shared setup of the resilience tests: ModelRoutes (public names "extra-*", which the standard test group may
// use) pointing at fault-injecting upstreams, a gateway started on top, and small helpers.
import OpenAI from 'openai';
import { standardManifests, startGateway, type GatewayOptions, type TestGateway } from '../helpers/gateway.js';

export interface BackendSpec {
  name: string;
  baseURL: string;
  priority?: number;
  weight?: number;
  model?: string;
}

export interface RouteSpec {
  timeouts?: Record<string, string>;
  retry?: { attempts?: number; budget?: string; retryOn?: string[] };
  streaming?: { keepAliveInterval?: string };
}

export function route(model: string, backends: BackendSpec[], spec: RouteSpec = {}): string {
  const body = {
    model,
    backends: backends.map((b) => ({ priority: 0, model: `${b.name}-model`, ...b })),
    ...spec,
  };
  // JSON is YAML: no quoting surprises in URLs or durations.
  return `---\napiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: ${model}}\nspec: ${JSON.stringify(body)}\n`;
}

/** A gateway serving the standard test config plus the given routes (the standard routes point nowhere useful). */
export function gatewayWith(routes: string[], options: GatewayOptions = {}): Promise<TestGateway> {
  return startGateway(standardManifests('http://127.0.0.1:9/v1', routes.join('\n')), options);
}

export function reload(gw: TestGateway, routes: string[]): void {
  gw.load(standardManifests('http://127.0.0.1:9/v1', routes.join('\n')));
}

export const chat = (client: OpenAI, model: string, opts: { signal?: AbortSignal } = {}) =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] }, opts).withResponse();

export const streamChat = (client: OpenAI, model: string) =>
  client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] }).withResponse();

/** Reads a stream to its end: the text, and the error it ended with (if any). */
export async function drain(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ text: string; error: unknown }> {
  let text = '';
  try {
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    return { text, error: undefined };
  } catch (error) {
    return { text, error };
  }
}

export async function caught(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

export async function metricValue(gw: TestGateway, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await gw.metrics.registry.getSingleMetric(name)?.get();
  const v = metric?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}
