import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { approximateTokens, TokenTally } from './token-count.js';

const exact = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
/** Relative error against o200k_base; docs/usage-and-limits.md bounds answer-sized text at 25 %. */
const error = (text: string) => Math.abs(approximateTokens(text) - exact(text)) / exact(text);

const TEXTS = {
  english:
    'A gateway sits between clients and the models they call. It authenticates each request, picks a backend, ' +
    'streams the answer back as it arrives, and records what every request consumed, so that limits and costs can ' +
    "be enforced. When an upstream doesn't report usage, the gateway estimates it from the text it relayed.\n\n" +
    'The estimate must be cheap: it runs for every such stream, on the thread that serves all the others.',
  code: [
    'export function retryDelay(attempt: number, baseMs = 100): number {',
    '  const jitter = Math.random() * baseMs;',
    '  return Math.min(30_000, baseMs * 2 ** attempt + jitter);',
    '}',
    '',
    'for (const backend of plan.backends) {',
    "  if (backend.health === 'down') continue;",
    '  await forward(request, backend, { timeoutMs: 5000 });',
    '}',
  ].join('\n'),
  chinese:
    '网关位于客户端和它们调用的模型之间。它对每个请求进行身份验证，选择一个后端，在答案到达时将其流式传回，' +
    '并记录每个请求消耗的资源，以便执行限额和计费。当上游不报告用量时，网关会根据它转发的文本进行估算。',
  russian:
    'Шлюз находится между клиентами и моделями, которые они вызывают. Он проверяет каждый запрос, выбирает ' +
    'бэкенд, передаёт ответ по мере его поступления и записывает, сколько потребил каждый запрос, чтобы ' +
    'можно было соблюдать лимиты и учитывать расходы.',
};

describe('approximateTokens', () => {
  it.each(Object.entries(TEXTS))('is within 25 %% of o200k_base on %s', (_, text) => {
    expect(error(text)).toBeLessThan(0.25);
  });

  it('counts nothing in no text', () => {
    expect(approximateTokens('')).toBe(0);
  });

  it('prices digits in groups of three and a character outside the BMP more than a letter', () => {
    expect(approximateTokens('1234567')).toBeGreaterThan(approximateTokens('123'));
    expect(approximateTokens('🙂🙂🙂')).toBeGreaterThan(approximateTokens('abc'));
  });

  it('tallies a text fed in pieces as the whole, a character outside the BMP split between them included', () => {
    const text = `${TEXTS.english} 🙂 ${TEXTS.chinese}`;
    const t = new TokenTally();
    for (let i = 0; i < text.length; i += 7) t.text(text.slice(i, i + 7));
    expect(Math.round(t.tokens())).toBe(approximateTokens(text));
  });
});
