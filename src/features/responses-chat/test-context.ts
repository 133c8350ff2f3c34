// The ResponseContext the tests of this folder translate with. Test support only.
import type { ResponseContext } from './response-context.js';

export const HEX = '0123456789abcdef0123456789abcdef';

export const testContext: ResponseContext = {
  id: `resp_${HEX}`,
  createdAt: 1_700_000_000,
  model: 'public-model',
  customTools: new Set(['apply_patch', 'tools__patch']),
  namespaced: new Map([
    ['multi_agent_v1__spawn_agent', { namespace: 'multi_agent_v1', name: 'spawn_agent' }],
    ['tools__patch', { namespace: 'tools', name: 'patch' }],
  ]),
  echo: {},
};
