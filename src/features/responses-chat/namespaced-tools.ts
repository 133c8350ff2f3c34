// A Responses `namespace` tool (a name and a description grouping function and custom tools, as Codex groups its
// multi-agent tools) has no equivalent in chat completions, whose tools are flat: each tool inside is offered as a
// chat function whose name carries the namespace, `<namespace>__<name>` (the separator Codex itself uses for MCP
// tools, valid in a chat function name), and a call of one is answered under its own name with `namespace` set.
// Pure.

/** Between the namespace and the tool's name in the chat function's name. */
const NAMESPACE_SEPARATOR = '__';

/** What a chat function name holds: an OpenAI function name's alphabet and length. */
export const CHAT_FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A tool inside a namespace: the name the client knows it by. */
export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** The chat function's name for `name` inside `namespace`. */
export function chatName(namespace: string, name: string): string {
  return `${namespace}${NAMESPACE_SEPARATOR}${name}`;
}

/** The chat function name of a call item the client sends back: namespaced when the item names its namespace. */
export function callName(item: { name: string; namespace?: string | null | undefined }): string {
  return item.namespace ? chatName(item.namespace, item.name) : item.name;
}

/** The members of a call item for a chat function's name: the namespace's tool under its own name, else the name as it is. */
export function callItemName(chatFunction: string, namespaced: ReadonlyMap<string, NamespacedName>): { name: string; namespace?: string } {
  const n = namespaced.get(chatFunction);
  return n ? { name: n.name, namespace: n.namespace } : { name: chatFunction };
}
