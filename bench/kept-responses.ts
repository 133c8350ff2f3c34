// Micro-benchmark of keeping a translated Responses answer (features/responses-chat/kept-responses.ts): a chat
// completion (900 characters of text and a tool call) translated to a Response and serialized, with and without
// handing its output to the in-process store (the response's record, as the transform does),
// alternated over rounds in one process; in µs per answer. The store starts empty and fills past its 64 MB bound,
// so later rounds pay for evictions too. Not part of `npm run bench`.
//
//   node --import tsx bench/kept-responses.ts
import { chatToResponse } from '../src/features/responses-chat/chat-to-response.js';
import { type KeptResponse, MemoryKeptResponses } from '../src/features/responses-chat/kept-responses.js';
import type { ResponseContext } from '../src/features/responses-chat/response-context.js';

const ROUNDS = 8;
const PER_ROUND = 40_000;

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'The quick brown fox jumps over the lazy dog. '.repeat(20),
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":["ls","-la"]}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 900, completion_tokens: 250, total_tokens: 1150 },
};
const INPUT = [{ role: 'user', content: 'List the files, please.' }];

const kept = new MemoryKeptResponses();
let n = 0;
const base = { createdAt: 1_700_000_000, model: 'm', customTools: new Set<string>(), namespaced: new Map(), echo: {} };
const context = (keep: boolean): ResponseContext => {
  const id = `resp_${(n++).toString(16).padStart(32, '0')}`;
  return { ...base, id, ...(keep ? { keep: (response: KeptResponse['response']) => kept.keep('ns/token', { id, input: INPUT, response }) } : {}) };
};

function perAnswer(keep: boolean): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i++) JSON.stringify(chatToResponse(completion, context(keep)).response);
  return Number(process.hrtime.bigint() - start) / PER_ROUND / 1000;
}

const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const [off, on] = round % 2 ? [perAnswer(false), perAnswer(true)] : [perAnswer(true), perAnswer(false)].reverse();
  ratios.push(on! / off!);
  console.log(`round ${round}: translated ${off!.toFixed(2)} µs, translated and kept ${on!.toFixed(2)} µs (${(on! / off!).toFixed(2)} ×)`);
}
ratios.sort((a, b) => a - b);
console.log(`median: keeping costs ${ratios[ROUNDS / 2]!.toFixed(2)} × translating and serializing the answer alone`);
