// The path an attempt asks a backend for (pure): the family path under the backend's base path, laid out in the
// backend's path style, with the backend's query parameters (spec.backends[].query, and a key sent as a query
// parameter) replacing any client parameter of the same name. (Traces show the path without its query string, so a
// key parameter stays out of them: features/tracing/exchange-trace.ts.)
import type { CompiledBackend } from '../../model/routing-table.js';

/** The operations Azure OpenAI serves under /deployments/{deployment}; everything else is under the base path itself. */
const AZURE_DEPLOYMENT_OPERATIONS = new Set([
  '/chat/completions',
  '/completions',
  '/embeddings',
  '/images/generations',
  '/images/edits',
  '/audio/transcriptions',
  '/audio/translations',
  '/audio/speech',
]);

/** `path`: the family path below the base URL, e.g. "/chat/completions", with the client's query string if any. */
export function upstreamPath(backend: CompiledBackend, path: string): string {
  const q = path.indexOf('?');
  const operation = q === -1 ? path : path.slice(0, q);
  const prefix =
    backend.pathStyle === 'azureDeployments' && AZURE_DEPLOYMENT_OPERATIONS.has(operation)
      ? `${backend.basePath}/deployments/${encodeURIComponent(backend.model)}`
      : backend.basePath;
  const keyParam = backend.auth.kind === 'query' ? backend.auth : undefined;
  if (backend.query.length === 0 && keyParam === undefined) return prefix + path;
  const own = new Set(backend.query.map((p) => p.name));
  if (keyParam) own.add(keyParam.param);
  const parts: string[] = [];
  if (q !== -1)
    for (const pair of path.slice(q + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      if (!own.has(safeDecode(eq === -1 ? pair : pair.slice(0, eq)))) parts.push(pair);
    }
  for (const p of backend.query) parts.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(p.value)}`);
  if (keyParam) parts.push(`${encodeURIComponent(keyParam.param)}=${encodeURIComponent(keyParam.key)}`);
  return `${prefix}${operation}?${parts.join('&')}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
}
