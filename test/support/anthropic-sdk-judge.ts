// @anthropic-ai/sdk as the judge of what the gateway sends a Messages client: a client whose fetch answers with
// the given bytes, so the SDK's own SSE reader and stream assembly (or its JSON handling) take them apart, and
// which records the body the SDK sent, so translation tests can start from the SDK's own requests.
import Anthropic from '@anthropic-ai/sdk';

export interface Judge {
  readonly client: Anthropic;
  /** The JSON bodies the client sent, in order. */
  readonly sent: unknown[];
}

/** A client whose every request is answered with `body` (an SSE text when `stream`), at `status`. */
export function judge(body: string, opts: { status?: number; stream?: boolean } = {}): Judge {
  const sent: unknown[] = [];
  const client = new Anthropic({
    apiKey: 'test-key',
    baseURL: 'http://judge.invalid',
    maxRetries: 0,
    fetch: async (_url: string | URL | Request, init?: RequestInit) => {
      sent.push(JSON.parse(String(init?.body)));
      const type = opts.stream ? 'text/event-stream' : 'application/json';
      return new Response(body, { status: opts.status ?? 200, headers: { 'content-type': type, 'request-id': 'req_test' } });
    },
  });
  return { client, sent };
}
