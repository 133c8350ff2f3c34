// The CompletionContext the tests of this folder translate with. Test support only.
import type { CompletionContext } from './completion-context.js';

export const testContext: CompletionContext = {
  id: 'chatcmpl-0123456789abcdef01234567',
  created: 1_700_000_000,
  model: 'claude-public',
  includeUsage: true,
};
