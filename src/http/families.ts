// Where each API family lives: the public path under /v1 and the same path below a backend's base URL.
import type { Family } from '../config/resources.js';

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
};
