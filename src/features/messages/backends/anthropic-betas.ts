// Which of the client's anthropic-beta flags a native backend receives. Claude Code believes it talks to Anthropic's
// API and sends many betas; Bedrock's InvokeModel refuses every request that carries a flag it does not support for
// the model (400 "invalid beta flag"), so it gets none unless the route lists the ones it accepts. Dropping a beta
// turns a feature off; sending an unknown one fails the request. Pure.
import type { CompiledBackend } from '../../../model/routing-table.js';

const NONE: ReadonlySet<string> = new Set();

/**
 * The betas a backend receives (spec.backends[].anthropicBetas.allow, else none to Bedrock's InvokeModel); undefined:
 * all as sent.
 */
export function betaAllowList(backend: Pick<CompiledBackend, 'anthropicBetas'>, bedrock: boolean): ReadonlySet<string> | undefined {
  return backend.anthropicBetas ?? (bedrock ? NONE : undefined);
}

/** The flags kept, first occurrence first, each once; every flag when `allow` is undefined. */
export function allowedBetas(betas: readonly string[], allow: ReadonlySet<string> | undefined): string[] {
  return [...new Set(allow ? betas.filter((b) => allow.has(b)) : betas)];
}

/** anthropic-beta values: comma-separated, possibly sent as several headers (node joins those with ", "). */
export function headerBetas(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

/**
 * The header edits that send a backend only its allowed betas in anthropic-beta (Anthropic's API, Vertex AI);
 * undefined when the client's header goes as sent (no allow list).
 */
export function betaHeaderEdits(
  value: string | string[] | undefined,
  allow: ReadonlySet<string> | undefined,
): { readonly drop: readonly string[]; readonly set: Readonly<Record<string, string>> } | undefined {
  if (allow === undefined || value === undefined) return undefined;
  const kept = allowedBetas(headerBetas(value), allow);
  return { drop: ['anthropic-beta'], set: kept.length > 0 ? { 'anthropic-beta': kept.join(',') } : {} };
}
