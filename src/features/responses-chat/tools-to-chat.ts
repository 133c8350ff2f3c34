// A Responses request's `tools` and `tool_choice` as chat completions' function tools. Pure. A `function` tool is
// the same tool; a `custom` tool (free text in, such as Codex's apply_patch) becomes a function with one string
// parameter `input`, its grammar, when it has one, told in that parameter's description (chat cannot enforce it).
// Tools the Responses API runs itself (web_search, file_search, mcp…) and namespaces are refused by their type:
// dropping one would let the model answer as if the client had not offered it.
import type { ChatFunctionTool, ChatToolChoice } from './chat-request.js';
import { customTool, functionTool, type ResponsesRequest } from './responses-request-schema.js';
import { invalid, ok, type Result } from './translation-result.js';

export interface ChatTools {
  readonly tools: ChatFunctionTool[];
  /** Names of the client's `custom` tools: a call of one is answered as a custom_tool_call. */
  readonly customTools: ReadonlySet<string>;
}

const NO_PARAMETERS = { type: 'object', properties: {} };

export function toolsToChat(tools: ResponsesRequest['tools']): Result<ChatTools> {
  const out: ChatFunctionTool[] = [];
  const custom = new Set<string>();
  const refused: { at: string; type: string }[] = [];
  for (const [i, t] of (tools ?? []).entries()) {
    const at = `tools[${i}]`;
    if (t.type === 'function') {
      const f = functionTool.safeParse(t);
      if (!f.success) return invalid(at, `${at}: ${f.error.issues[0]?.message ?? 'not a function tool'}`);
      const { name, description, parameters, strict } = f.data;
      const fn = {
        name,
        ...(description ? { description } : {}),
        parameters: parameters ?? NO_PARAMETERS,
        ...(strict === true ? { strict: true as const } : {}),
      };
      out.push({ type: 'function', function: fn });
    } else if (t.type === 'custom') {
      const c = customTool.safeParse(t);
      if (!c.success) return invalid(at, `${at}: ${c.error.issues[0]?.message ?? 'not a custom tool'}`);
      const { name, description, format } = c.data;
      const grammar =
        format?.type === 'grammar' && format.definition ? `The input follows this ${format.syntax ?? ''} grammar:\n${format.definition}` : undefined;
      const input = { type: 'string', description: grammar ?? 'The raw input of the tool.' };
      const parameters = { type: 'object', properties: { input }, required: ['input'], additionalProperties: false };
      out.push({ type: 'function', function: { name, ...(description ? { description } : {}), parameters } });
      custom.add(name);
    } else refused.push({ at, type: t.type });
  }
  if (refused.length > 0) return refusal(refused);
  return ok({ tools: out, customTools: custom });
}

/** Every tool chat cannot be offered, named at once (a client's config fixes them together); param: the first. */
function refusal(refused: readonly { at: string; type: string }[]) {
  const named = refused.map((r) => `${r.at} (\`${r.type}\`)`).join(', ');
  const types = new Set(refused.map((r) => r.type));
  const hints = [
    ...(types.has('namespace') ? ['a namespace groups tools under a name a chat tool call cannot carry (Codex: [features] multi_agent = false)'] : []),
    ...(types.has('web_search') ? ['Codex: web_search = "disabled"'] : []),
  ];
  return invalid(
    `${refused[0]!.at}.type`,
    `${named}: this model is served through chat completions, which takes function tools only: tools that OpenAI's Responses API runs itself have no equivalent there. Offer function or custom tools only${hints.length > 0 ? ` (${hints.join('; ')})` : ''}.`,
    'unsupported_tool',
  );
}

export function toolChoiceToChat(choice: ResponsesRequest['tool_choice']): Result<ChatToolChoice | undefined> {
  if (choice === undefined || choice === null) return ok(undefined);
  if (typeof choice === 'string') return ok(choice);
  const { type } = choice;
  const name = (choice as { name?: unknown }).name;
  if ((type === 'function' || type === 'custom') && typeof name === 'string') return ok({ type: 'function', function: { name } });
  return invalid(
    'tool_choice',
    `tool_choice of type \`${type}\` cannot be passed to this model: it is served through chat completions. Use auto, none, required or a function or custom tool by name.`,
  );
}
