// The parts of an Anthropic Messages request the translation reads, as zod schemas: parsing both checks what
// Anthropic itself would refuse (missing max_tokens, a bad role, no messages) and types what the translation
// reads. Objects are loose: members we do not translate (cache_control, citations, thinking, context_management,
// output_config's effort…) pass validation and are dropped by the translation, not refused here.
import { z } from 'zod';

const text = z.looseObject({ type: z.literal('text'), text: z.string() });

const imageSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);
const image = z.looseObject({ type: z.literal('image'), source: imageSource });

const documentSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('text'), media_type: z.string().optional(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
  z.looseObject({ type: z.literal('content'), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);
const document = z.looseObject({ type: z.literal('document'), source: documentSource, title: z.string().nullish() });

const toolUse = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });

const toolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  // Discriminated, as the blocks are: a block of another type (search_result…) is refused by its name.
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image, document]))]).optional(),
  is_error: z.boolean().nullish(),
});

const thinking = z.looseObject({ type: z.literal('thinking') });
const redactedThinking = z.looseObject({ type: z.literal('redacted_thinking') });

/** The content blocks the translation knows; any other type fails the discriminator and is refused by name. */
const block = z.discriminatedUnion('type', [text, image, document, toolUse, toolResult, thinking, redactedThinking]);

const message = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(block)]),
});

const tool = z.looseObject({
  type: z.string().nullish(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('tool'), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
]);

// Structured outputs: the answer must be JSON matching the schema (`output_config.format`, or the beta's
// top-level `output_format`). Anthropic knows no other format type.
const outputFormat = z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) });

export const messagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.int().positive(),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(text)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().optional(),
  output_config: z.looseObject({ format: outputFormat.nullish() }).nullish(),
  output_format: outputFormat.nullish(),
});

export type MessagesRequest = z.infer<typeof messagesRequest>;
export type ContentBlock = z.infer<typeof block>;
export type TextBlock = z.infer<typeof text>;
export type ImageBlock = z.infer<typeof image>;
export type DocumentBlock = z.infer<typeof document>;
