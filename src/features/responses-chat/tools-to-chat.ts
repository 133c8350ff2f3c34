// A Responses request's `tools` and `tool_choice` as chat completions' function tools. Pure. A `function` tool is
// the same tool; a `custom` tool (free text in, such as Codex's apply_patch) becomes a function with one string
// parameter `input`, its grammar, when it has one, told in that parameter's description (chat cannot enforce it);
// a `namespace` (Codex's multi-agent tools) is flattened: each function or custom tool inside becomes a chat
// function named `<namespace>__<name>` (namespaced-tools.ts), the namespace's description before its own. A name
// that does not fit a chat function name, or that two tools would share, is refused (the model could not call it,
// or its call could not be told apart). Tools the Responses API runs itself (web_search, file_search, mcp…) are
// refused by their type: dropping one would let the model answer as if the client had not offered it.
import type { ChatTool, ChatToolChoice } from '../../model/chat-request.js';
import { CHAT_FUNCTION_NAME, chatName, type NamespacedName } from './namespaced-tools.js';
import { customTool, functionTool, namespaceTool, type ResponsesRequest } from './responses-request-schema.js';
import { invalid, ok, type Result } from '../../model/translation.js';

export interface ChatTools {
  readonly tools: ChatTool[];
  /** Chat function names of the client's `custom` tools: a call of one is answered as a custom_tool_call. */
  readonly customTools: ReadonlySet<string>;
  /** Chat function names of tools inside a namespace, and the namespace and name a call of one is answered with. */
  readonly namespaced: ReadonlyMap<string, NamespacedName>;
}

type Tool = { type: string } & Record<string, unknown>;

const NO_PARAMETERS = { type: 'object', properties: {} };

export function toolsToChat(tools: ResponsesRequest['tools']): Result<ChatTools> {
  const out: ChatTool[] = [];
  const custom = new Set<string>();
  const namespaced = new Map<string, NamespacedName>();
  const refused: { at: string; type: string }[] = [];
  const add = (t: Tool, at: string, ns?: { name: string; description?: string | null | undefined }): Result<void> => {
    const fn = chatFunction(t, at, ns?.description);
    if (!fn.ok) return fn;
    if (!fn.value) {
      refused.push({ at, type: t.type });
      return ok(undefined);
    }
    const { tool, custom: isCustom } = fn.value;
    const own = tool.function.name;
    const name = ns ? chatName(ns.name, own) : own;
    if (ns && !CHAT_FUNCTION_NAME.test(name)) {
      return invalid(
        `${at}.name`,
        `${at}: the tool \`${own}\` of the namespace \`${ns.name}\` is offered to this model (served through chat completions, whose tools have no namespace) as the function \`${name}\`, which is not a valid function name (letters, digits, _ and -, at most 64). Use shorter names.`,
      );
    }
    if (out.some((o) => o.function.name === name)) {
      return invalid(
        `${at}.name`,
        `${at}: two tools would be offered to this model (served through chat completions, whose tools have no namespace) under the one function name \`${name}\`. Rename one.`,
      );
    }
    out.push({ ...tool, function: { ...tool.function, name } });
    if (isCustom) custom.add(name);
    if (ns) namespaced.set(name, { namespace: ns.name, name: own });
    return ok(undefined);
  };
  for (const [i, t] of (tools ?? []).entries()) {
    const at = `tools[${i}]`;
    if (t.type !== 'namespace') {
      const done = add(t, at);
      if (!done.ok) return done;
      continue;
    }
    const n = namespaceTool.safeParse(t);
    if (!n.success) return invalid(at, `${at}: ${n.error.issues[0]?.message ?? 'not a namespace tool'}`);
    for (const [j, inner] of n.data.tools.entries()) {
      const done = add(inner, `${at}.tools[${j}]`, n.data);
      if (!done.ok) return done;
    }
  }
  if (refused.length > 0) return refusal(refused);
  return ok({ tools: out, customTools: custom, namespaced });
}

/** A function or custom tool as a chat function (its own name), undefined for a type chat cannot be offered. */
function chatFunction(t: Tool, at: string, nsDescription: string | null | undefined): Result<{ tool: ChatTool; custom: boolean } | undefined> {
  const describe = (own: string | null | undefined) => {
    const d = [nsDescription, own].filter(Boolean).join('\n\n');
    return d ? { description: d } : {};
  };
  if (t.type === 'function') {
    const f = functionTool.safeParse(t);
    if (!f.success) return invalid(at, `${at}: ${f.error.issues[0]?.message ?? 'not a function tool'}`);
    const { name, description, parameters, strict } = f.data;
    const fn = { name, ...describe(description), parameters: parameters ?? NO_PARAMETERS, ...(strict === true ? { strict: true as const } : {}) };
    return ok({ tool: { type: 'function', function: fn }, custom: false });
  }
  if (t.type === 'custom') {
    const c = customTool.safeParse(t);
    if (!c.success) return invalid(at, `${at}: ${c.error.issues[0]?.message ?? 'not a custom tool'}`);
    const { name, description, format } = c.data;
    const grammar =
      format?.type === 'grammar' && format.definition ? `The input follows this ${format.syntax ?? ''} grammar:\n${format.definition}` : undefined;
    const input = { type: 'string', description: grammar ?? 'The raw input of the tool.' };
    const parameters = { type: 'object', properties: { input }, required: ['input'], additionalProperties: false };
    return ok({ tool: { type: 'function', function: { name, ...describe(description), parameters } }, custom: true });
  }
  return ok(undefined);
}

/** Every tool chat cannot be offered, named at once (a client's config fixes them together); param: the first. */
function refusal(refused: readonly { at: string; type: string }[]) {
  const named = refused.map((r) => `${r.at} (\`${r.type}\`)`).join(', ');
  const hint = refused.some((r) => r.type === 'web_search') ? ' (Codex: web_search = "disabled")' : '';
  return invalid(
    `${refused[0]!.at}.type`,
    `${named}: this model is served through chat completions, which takes function tools only: tools that OpenAI's Responses API runs itself have no equivalent there. Offer function, custom or namespace tools only${hint}.`,
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
