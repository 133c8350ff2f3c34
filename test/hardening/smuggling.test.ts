// Request smuggling: framing a front proxy and the gateway could read differently. Whatever the bytes, a request
// hidden inside another one's body never reaches an upstream, an ambiguous framing is refused (never guessed), and
// what the gateway sends upstream is framed by the gateway alone (its own Content-Length, no client
// Transfer-Encoding), so the upstream cannot be desynchronised either.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../src/gateway/main.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests } from '../helpers/gateway.js';
import { startServedGateway } from './served-gateway.js';
import { expectOpenAIError, httpRequest, rawRequest } from './support.js';

let upstream: RecordingUpstream;
let gw: GatewayHandle;
const auth = { Authorization: `Bearer ${ALICE_KEY}`, 'Content-Type': 'application/json' };
const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'visible' }] });
/** The request a smuggler hides: if it ever reached the upstream, its path says so. */
const hiddenBody = JSON.stringify({ model: 'gpt-4o-mini', input: 'smuggled' });
const hidden = httpRequest('POST', '/v1/embeddings', auth, hiddenBody).toString('latin1');

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startServedGateway(standardManifests(upstream.baseURL), { bodyLimits: { jsonBytes: 64 * 1024, multipartBytes: 1024 * 1024 } });
});
afterAll(async () => {
  await gw?.close({ timeoutMs: 0 });
  await upstream?.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

function head(lines: string[]): string {
  return `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${ALICE_KEY}\r\nContent-Type: application/json\r\n${lines.join('\r\n')}\r\n\r\n`;
}
const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;

describe('ambiguous framing is refused, and the request hidden behind it never reaches an upstream', () => {
  it.each([
    // CL.TE: a front proxy using Content-Length forwards everything; a chunked reader stops at 0 and reads the rest as a new request.
    [
      'Content-Length and Transfer-Encoding: chunked (CL.TE)',
      `${head([`Content-Length: ${5 + hidden.length}`, 'Transfer-Encoding: chunked'])}0\r\n\r\n${hidden}`,
    ],
    // TE.CL: the other way round.
    ['Transfer-Encoding: chunked and a short Content-Length (TE.CL)', head(['Transfer-Encoding: chunked', 'Content-Length: 4']) + chunked(hidden)],
    ['two different Content-Lengths', head([`Content-Length: ${chat.length}`, `Content-Length: ${chat.length + hidden.length}`]) + chat + hidden],
    ['a Content-Length list', head([`Content-Length: ${chat.length}, ${chat.length + hidden.length}`]) + chat + hidden],
    ['a signed Content-Length', head([`Content-Length: +${chat.length}`]) + chat + hidden],
    ['a space before the colon of Transfer-Encoding', head(['Transfer-Encoding : chunked', `Content-Length: ${chat.length}`]) + chat + hidden],
    ['Transfer-Encoding not ending in chunked', head(['Transfer-Encoding: chunked, identity']) + chunked(chat) + hidden],
    ['an obs-folded Transfer-Encoding', head(['Transfer-Encoding: identity', ' chunked']) + chunked(chat) + hidden],
    ['a chunk extension with a bare LF', `${head(['Transfer-Encoding: chunked'])}${chat.length.toString(16)};x\n${chat}\r\n0\r\n\r\n${hidden}`],
  ])('%s → 400, nothing forwarded', async (_name, bytes) => {
    const r = await rawRequest(gw.apiURL, [bytes], { waitMs: 1_500 });
    expectOpenAIError(r, 400, 'invalid_request');
    expect(r.closed).toBe(true);
    // Exactly one answer on the connection: the hidden request was not parsed as a second one.
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(upstream.requests).toEqual([]);
  });

  it('a refused upload is not read as requests: a 413 on a body that contains one forwards nothing', async () => {
    const body = hidden.repeat(Math.ceil((100 * 1024) / hidden.length));
    const r = await rawRequest(gw.apiURL, [head([`Content-Length: ${body.length}`]), body], { waitMs: 3_000 });
    expectOpenAIError(r, 413, 'request_too_large');
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(upstream.requests).toEqual([]);
  });

  it('a refused small body is consumed as a body: the pipelined request after it is served, the one inside it is not', async () => {
    const smuggling = JSON.stringify({ note: hidden });
    const refused = `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer wrong-key\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(smuggling)}\r\n\r\n${smuggling}`;
    const next = httpRequest('POST', '/v1/chat/completions', auth, chat).toString('latin1');
    const r = await rawRequest(gw.apiURL, [refused + next], { waitMs: 800 });
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 401', 'HTTP/1.1 200']);
    expect(upstream.requests.map((q) => q.path)).toEqual(['/v1/chat/completions']);
  });
});

describe('bad chunk sizes are refused, never guessed', () => {
  const L = chat.length;
  const te = head(['Transfer-Encoding: chunked']);
  it.each([
    ['a size past 64 bits', `ffffffffffffffffff${L.toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['a negative size', `-${L.toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['a 0x prefix', `0x${L.toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['a space after the size', `${L.toString(16)} \r\n${chat}\r\n0\r\n\r\n`],
    ['a space before the size', ` ${L.toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['an empty size line', `\r\n${chat}\r\n0\r\n\r\n`],
    ['more data than the size', `${(L - 10).toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['less data than the size', `${(L + 10).toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['no CRLF after the data', `${L.toString(16)}\r\n${chat}0\r\n\r\n`],
    ['a bare LF after the data', `${L.toString(16)}\r\n${chat}\n0\r\n\r\n`],
    ['a quoted CRLF in a chunk extension', `${L.toString(16)};a="x\r\n"\r\n${chat}\r\n0\r\n\r\n`],
  ])('%s → 400, nothing forwarded', async (_name, body) => {
    const r = await rawRequest(gw.apiURL, [te + body + hidden], { waitMs: 1_500 });
    expectOpenAIError(r, 400, 'invalid_request');
    expect(r.closed).toBe(true);
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(upstream.requests).toEqual([]);
  });

  it.each([
    ['leading zeros', `0000${L.toString(16)}\r\n${chat}\r\n0\r\n\r\n`],
    ['upper-case hex and an extension', `${L.toString(16).toUpperCase()};name=value\r\n${chat}\r\n0\r\n\r\n`],
    ['a trailer', `${L.toString(16)}\r\n${chat}\r\n0\r\nX-Trailer: 1\r\n\r\n`],
  ])('valid chunking with %s is read as it says: the body whole, what follows as the next request', async (_name, body) => {
    const last = httpRequest('GET', '/v1/models', { ...auth, Connection: 'close' }).toString('latin1');
    const r = await rawRequest(gw.apiURL, [te + body + last], { waitMs: 1_500 });
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(upstream.requests.map((q) => JSON.parse(q.body.toString()).messages)).toEqual([JSON.parse(chat).messages]);
  });
});

describe('a pipelined request after a refusal that closes the connection is neither answered nor forwarded', () => {
  const big = ' '.repeat(100 * 1024); // over the 64 KiB JSON limit, and over what node drops by itself
  it.each([
    ['413, declared length', httpRequest('POST', '/v1/chat/completions', auth, big)],
    [
      '413, chunked',
      httpRequest('POST', '/v1/chat/completions', { ...auth, 'Transfer-Encoding': 'chunked' }, `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`),
    ],
    ['415, compressed body', httpRequest('POST', '/v1/chat/completions', { ...auth, 'Content-Encoding': 'gzip' }, big)],
    ['401, 1 MiB body', httpRequest('POST', '/v1/chat/completions', { ...auth, Authorization: 'Bearer wrong' }, ' '.repeat(1 << 20))],
    ['400, no Host', Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${ALICE_KEY}\r\nContent-Length: ${big.length}\r\n\r\n${big}`)],
  ])('%s', async (_name, refused) => {
    const next = httpRequest('POST', '/v1/chat/completions', auth, chat);
    const r = await rawRequest(gw.apiURL, [Buffer.concat([refused, next])], { waitMs: 3_000 });
    expect(r.headers['connection']).toBe('close');
    expect(r.closed).toBe(true);
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(r.json?.error).toBeDefined();
    expect(upstream.requests).toEqual([]);
  });
});

describe('what the upstream receives is framed by the gateway', () => {
  it('a chunked client body goes upstream with its own Content-Length and no Transfer-Encoding', async () => {
    const r = await rawRequest(gw.apiURL, [head(['Transfer-Encoding: chunked']) + chunked(chat)], { waitMs: 800 });
    expect(r.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    const sent = upstream.requests[0]!;
    expect(sent.headers['transfer-encoding']).toBeUndefined();
    expect(sent.headers['content-length']).toBe(String(sent.body.length));
    expect(JSON.parse(sent.body.toString()).messages).toEqual(JSON.parse(chat).messages);
  });

  it('hop-by-hop headers a client names in Connection are not forwarded', async () => {
    const r = await rawRequest(
      gw.apiURL,
      [head(['Connection: keep-alive, X-Smuggle', 'X-Smuggle: 1', 'TE: trailers', 'Upgrade: h2c', `Content-Length: ${chat.length}`]) + chat],
      { waitMs: 800 },
    );
    expect(r.status).toBe(200);
    const sent = upstream.requests[0]!;
    expect(sent.headers['x-smuggle']).toBeUndefined();
    expect(sent.headers['te']).toBeUndefined();
    expect(sent.headers['upgrade']).toBeUndefined();
  });
});

it('the gateway is healthy after all of it', async () => {
  expect((await fetch(`${gw.apiURL}/healthz`)).status).toBe(200);
  const r = await fetch(`${gw.apiURL}/v1/chat/completions`, { method: 'POST', headers: auth, body: chat });
  expect(r.status).toBe(200);
});
