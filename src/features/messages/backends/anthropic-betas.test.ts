import { describe, expect, it } from 'vitest';
import { allowedBetas, betaAllowList, betaHeaderEdits, headerBetas } from './anthropic-betas.js';

describe('the anthropic-beta flags a native backend receives', () => {
  const allow = new Set(['interleaved-thinking-2025-05-14']);

  it('by default: all to Anthropic’s API and Vertex AI, none to Bedrock; a backend’s own list wins everywhere', () => {
    expect(betaAllowList({}, false)).toBeUndefined();
    expect(betaAllowList({}, true)).toEqual(new Set());
    for (const bedrock of [false, true]) expect(betaAllowList({ anthropicBetas: allow }, bedrock)).toBe(allow);
  });

  it('keeps the allowed flags in the order sent, each once', () => {
    expect(allowedBetas(['a', 'interleaved-thinking-2025-05-14', 'b', 'interleaved-thinking-2025-05-14'], allow)).toEqual(['interleaved-thinking-2025-05-14']);
    expect(allowedBetas(['a', 'b', 'a'], undefined)).toEqual(['a', 'b']);
  });

  it('reads comma lists and repeated headers', () => {
    expect(headerBetas(['b1, b2', ' b3 ,', 'b1'])).toEqual(['b1', 'b2', 'b3', 'b1']);
    expect(headerBetas(undefined)).toEqual([]);
  });

  it('edits the header only under an allow list, dropping it when nothing is left', () => {
    const sent = 'claude-code-20250219,interleaved-thinking-2025-05-14';
    expect(betaHeaderEdits(sent, undefined)).toBeUndefined();
    expect(betaHeaderEdits(undefined, allow)).toBeUndefined();
    expect(betaHeaderEdits(sent, allow)).toEqual({ drop: ['anthropic-beta'], set: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } });
    expect(betaHeaderEdits(sent, new Set())).toEqual({ drop: ['anthropic-beta'], set: {} });
  });
});
