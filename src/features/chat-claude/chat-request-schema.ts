// The parts of OpenAI's chat completions request the Messages translation reads, as zod schemas. Objects are loose:
// members the translation does not carry (name on a message, detail on an image…) pass validation and are
// dropped; what Anthropic cannot carry is refused by chat-to-claude.ts, by its name, rather than here.
import { z } from 'zod';

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const imagePart = z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string() }) });
const filePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().nullish(), file_id: z.string().nullish(), filename: z.string().nullish() }),
});
const audioPart = z.looseObject({ type: z.literal('input_audio') });

const userPart = z.discriminatedUnion('type', [textPart, imagePart, filePart, audioPart]);
export type UserPart = z.infer<typeof userPart>;
const textParts = z.array(z.union([textPart, refusalPart]));

const toolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const instruction = z.looseObject({ role: z.enum(['system', 'developer']), content: z.union([z.string(), textParts]) });
const user = z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart)]) });
const assistant = z.looseObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), textParts]).nullish(),
  refusal: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  function_call: z.unknown().optional(),
});
const tool = z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.union([z.string(), textParts]) });
const legacyFunction = z.looseObject({ role: z.literal('function') });

const chatMessage = z.discriminatedUnion('role', [instruction, user, assistant, tool, legacyFunction]);
export type ChatMessage = z.infer<typeof chatMessage>;

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);
export type ToolChoice = z.infer<typeof toolChoice>;

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({ name: z.string(), schema: z.record(z.string(), z.unknown()).nullish(), strict: z.boolean().nullish() }),
  }),
]);

const count = z.number().int().nonnegative().nullish();

export const chatRequest = z.looseObject({
  model: z.string(),
  messages: z.array(chatMessage).min(1),
  max_completion_tokens: count,
  max_tokens: count,
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  user: z.string().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.number().int().nullish(),
});
export type ChatRequest = z.infer<typeof chatRequest>;

export { functionTool };
