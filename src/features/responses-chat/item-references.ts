// `item_reference` input items resolved against the responses the gateway kept (kept-responses.ts): an item's id
// names the response it came from (response-parts.ts, itemId). Pure. A reference to a reasoning item (rs_…) is left
// for the translation, which drops it as it drops the item itself; one to an item not kept is left too, and the
// translation refuses it saying what to send instead.
import type { KeptResponse } from './kept-responses.js';
import { responseIdOfItem } from './response-parts.js';

/** The ids the request's input names by item_reference, reasoning items aside. */
export function referencedIds(body: unknown): string[] {
  const ids: string[] = [];
  for (const item of inputItems(body)) {
    const id = referenceId(item);
    if (id !== undefined && !id.startsWith('rs_')) ids.push(id);
  }
  return ids;
}

/** The responses these items came from, each once (an id the gateway did not mint names none). */
export function responsesOf(itemIds: readonly string[]): string[] {
  return [...new Set(itemIds.map(responseIdOfItem).filter((id) => id !== undefined))];
}

/** The body with each reference to an item of a found response replaced by that item (in place: the body is the translation's own copy). */
export function resolveReferences(body: unknown, found: ReadonlyMap<string, KeptResponse>): void {
  const input = inputItems(body);
  for (const [i, item] of input.entries()) {
    const id = referenceId(item);
    if (id === undefined) continue;
    const response = found.get(responseIdOfItem(id) ?? '');
    const kept = response?.response.output.find((o) => o.id === id);
    if (kept) input[i] = kept;
  }
}

function inputItems(body: unknown): unknown[] {
  const input = body && typeof body === 'object' ? (body as Record<string, unknown>)['input'] : undefined;
  return Array.isArray(input) ? input : [];
}

function referenceId(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const r = item as Record<string, unknown>;
  return r['type'] === 'item_reference' && typeof r['id'] === 'string' ? r['id'] : undefined;
}
