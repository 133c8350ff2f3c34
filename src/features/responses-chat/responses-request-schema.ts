// The parts of a Responses API request the chat translation reads, as zod schemas. Objects are loose: members
// the translation does not carry (ids of items, annotations, include, prompt_cache_key, client_metadata…) pass
// validation and are dropped; each input item and tool is parsed by its own `type` (request-items.ts), so an
// unknown kind is refused by its name rather than by a union's failure.
import { z } from 'zod';

const inputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['low', 'high', 'auto']).nullish(),
});
const inputFile = z.looseObject({
  type: z.literal('input_file'),
  file_data: z.string().nullish(),
  file_id: z.string().nullish(),
  file_url: z.string().nullish(),
  filename: z.string().nullish(),
});

const contentPart = z.discriminatedUnion('type', [inputText, outputText, refusal, inputImage, inputFile]);
export type ContentPart = z.infer<typeof contentPart>;

export const message = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart)]),
});

const toolOutput = z.union([z.string(), z.array(contentPart)]);

export const functionCall = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  namespace: z.string().nullish(),
});
/** A function_call_output or a custom_tool_call_output: the same members. */
export const toolCallOutput = z.looseObject({ type: z.enum(['function_call_output', 'custom_tool_call_output']), call_id: z.string(), output: toolOutput });
export const customToolCall = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  namespace: z.string().nullish(),
});

export const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
export const customTool = z.looseObject({
  type: z.literal('custom'),
  name: z.string().min(1),
  description: z.string().nullish(),
  format: z.looseObject({ type: z.string(), syntax: z.string().nullish(), definition: z.string().nullish() }).nullish(),
});

/** A namespace's tools are each parsed as a function or custom tool (tools-to-chat.ts). */
export const namespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })),
});

const namedChoice = z.looseObject({ type: z.enum(['function', 'custom']), name: z.string() });
const toolChoice = z.union([z.enum(['auto', 'none', 'required']), namedChoice, z.looseObject({ type: z.string() })]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
    description: z.string().nullish(),
  }),
]);

/** The request's top level; `input` items and `tools` are typed only as objects with a `type` here. */
export const responsesRequest = z.looseObject({
  model: z.string().optional(),
  instructions: z.string().nullish(),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]).optional(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish() }).nullish(),
  text: z.looseObject({ format: textFormat.nullish() }).nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  conversation: z.unknown().optional(),
  prompt: z.unknown().optional(),
});
export type ResponsesRequest = z.infer<typeof responsesRequest>;
