// The API families a route can serve, and where each lives: the public path under /v1 and the same path below a
// backend's base URL.

/**
 * API families a route can serve; the names follow the SDKs' resource paths (OpenAI's, and Anthropic's for
 * `messages`, the Messages API that coding agents such as Claude Code speak).
 */
export const FAMILIES = [
  'chat.completions',
  'responses',
  'embeddings',
  'images.generations',
  'images.edits',
  'audio.transcriptions',
  'audio.translations',
  'audio.speech',
  'videos',
  'messages',
] as const;
export type Family = (typeof FAMILIES)[number];

export const FAMILY_PATHS: Readonly<Record<Family, string>> = {
  'chat.completions': '/chat/completions',
  responses: '/responses',
  embeddings: '/embeddings',
  'images.generations': '/images/generations',
  'images.edits': '/images/edits',
  'audio.transcriptions': '/audio/transcriptions',
  'audio.translations': '/audio/translations',
  'audio.speech': '/audio/speech',
  videos: '/videos',
  messages: '/messages',
};

/**
 * Families whose create call takes multipart/form-data (file uploads), as the OpenAI API and its SDKs send them;
 * every other family takes JSON only. Videos take both (a JSON prompt, or a form with an input_reference file).
 */
export const MULTIPART_FAMILIES: ReadonlySet<Family> = new Set<Family>(['images.edits', 'audio.transcriptions', 'audio.translations', 'videos']);
