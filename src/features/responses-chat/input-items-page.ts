// GET /v1/responses/{id}/input_items for a response the gateway kept: the request's own input items (not the
// conversation it continued) as the Responses API lists them, a page at a time. Pure. Each item gets an id (its own,
// else one minted from the response's and its place), a message its text as input_text parts (output_text for the
// assistant's) and a status.
import { GatewayError } from '../../model/errors.js';
import { isRecord } from '../../model/translation.js';

export interface InputItemsPage {
  readonly object: 'list';
  readonly data: readonly Record<string, unknown>[];
  readonly first_id: string | null;
  readonly last_id: string | null;
  readonly has_more: boolean;
}

/** The query parameters a list reads; anything else is ignored, as `include` is (nothing to include). */
export interface PageQuery {
  readonly after?: unknown;
  readonly limit?: unknown;
  readonly order?: unknown;
}

const PREFIX: Readonly<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
};

/** The page of `input` (the kept request's input items of response `responseId`) that `query` asks for. */
export function inputItemsPage(responseId: string, input: readonly unknown[], query: PageQuery): InputItemsPage {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('limit', 'limit must be an integer from 1 to 100.');
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalid('order', "order must be 'asc' or 'desc'.");
  const hex = responseId.replace(/^resp_/, '');
  const items = input.map((item, i) => listed(item, `${hex}_in${i}`));
  if (order === 'desc') items.reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = items.findIndex((item) => item['id'] === query.after);
    // An unknown cursor lists nothing after it, as a cursor past the end would.
    start = at < 0 ? items.length : at + 1;
  }
  const data = items.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.['id'] as string | undefined) ?? null,
    last_id: (data.at(-1)?.['id'] as string | undefined) ?? null,
    has_more: start + limit < items.length,
  };
}

/** An input item as the list shows it; `suffix` makes the id of one that had none. */
function listed(raw: unknown, suffix: string): Record<string, unknown> {
  const item = isRecord(raw) ? raw : {};
  const type = typeof item['type'] === 'string' ? item['type'] : 'message';
  const id = typeof item['id'] === 'string' ? item['id'] : `${PREFIX[type] ?? 'item'}_${suffix}`;
  if (type !== 'message') return { ...item, id };
  const role = typeof item['role'] === 'string' ? item['role'] : 'user';
  const content =
    typeof item['content'] === 'string' ? [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: item['content'] }] : item['content'];
  return { ...item, type, id, role, content, status: item['status'] ?? 'completed' };
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError(400, message, { code: 'invalid_value', param });
}
