// The SigV4 verifier is the fake Bedrock's only authentication check, so it is pinned to the official AWS SigV4
// test suite rather than to the signer under test. Each vector is transcribed from
//   awslabs/aws-c-auth  tests/aws-signing-test-suite/v4/<name>/{context.json,header-signed-request.txt}
//   (commit 495329c2433034bd8fd53fc6ba9e0202d3fac876; the suite AWS publishes as aws-sig-v4-test-suite),
// except the one marked smithy, from
//   smithy-lang/smithy-typescript  packages/signature-v4/src/suite.fixture.ts  (the 2015 suite's form of the case).
// All use AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, service "service", 20150830T123600Z.
// Header names are written lower-case, as node's IncomingHttpHeaders delivers them; values are as in the files.
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type SigV4Credentials, type SigV4Request, verifySigV4 } from './sigv4-verifier.js';

const AKID = 'AKIDEXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const AMZ_DATE = '20150830T123600Z';
const NOW = new Date('2015-08-30T12:36:00Z');
const HOST = 'example.amazonaws.com';
const SCOPE = `${AKID}/20150830/us-east-1/service/aws4_request`;
const STS_TOKEN =
  'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
const FORM_BODY_SHA256 = '9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e';

interface Vector {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
  /** context.json credentials.token, when the vector signs with temporary credentials. */
  token?: string;
  authorization: string;
}

const auth = (signedHeaders: string, signature: string): string =>
  `AWS4-HMAC-SHA256 Credential=${SCOPE}, SignedHeaders=${signedHeaders}, Signature=${signature}`;

const VECTORS: Vector[] = [
  {
    name: 'get-vanilla',
    method: 'GET',
    path: '/',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'),
  },
  {
    name: 'get-vanilla-query-order-key-case',
    method: 'GET',
    path: '/?Param2=value2&Param1=value1',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500'),
  },
  {
    name: 'get-vanilla-query-order-encoded',
    method: 'GET',
    path: '/?Param-3=Value3&Param=Value2&%E1%88%B4=Value1',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac'),
  },
  {
    name: 'get-vanilla-utf8-query',
    method: 'GET',
    path: '/?ሴ=bar',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04'),
  },
  {
    name: 'get-header-value-trim',
    method: 'GET',
    path: '/',
    headers: { host: HOST, 'my-header1': ' value1', 'my-header2': ' "a   b   c"', 'x-amz-date': AMZ_DATE },
    authorization: auth('host;my-header1;my-header2;x-amz-date', 'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736'),
  },
  {
    name: 'get-header-value-order',
    method: 'GET',
    path: '/',
    headers: { host: HOST, 'my-header1': ['value4', 'value1', 'value3', 'value2'], 'x-amz-date': AMZ_DATE },
    authorization: auth('host;my-header1;x-amz-date', '08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01'),
  },
  {
    name: 'get-header-value-multiline',
    method: 'GET',
    path: '/',
    headers: { host: HOST, 'my-header1': 'value1\n  value2\n     value3', 'x-amz-date': AMZ_DATE },
    authorization: auth('host;my-header1;x-amz-date', 'cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd'),
  },
  {
    name: 'post-vanilla-query',
    method: 'POST',
    path: '/?Param1=value1',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11'),
  },
  {
    name: 'post-x-www-form-urlencoded',
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      host: HOST,
      'content-length': '13',
      'x-amz-date': AMZ_DATE,
      'x-amz-content-sha256': FORM_BODY_SHA256,
    },
    body: 'Param1=value1',
    authorization: auth('content-length;content-type;host;x-amz-content-sha256;x-amz-date', 'd3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b'),
  },
  {
    name: 'post-x-www-form-urlencoded (smithy)',
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/x-www-form-urlencoded', host: HOST, 'x-amz-date': AMZ_DATE },
    body: 'Param1=value1',
    authorization: auth('content-type;host;x-amz-date', 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a'),
  },
  {
    name: 'get-space-normalized',
    method: 'GET',
    path: '/example space/',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741'),
  },
  {
    name: 'get-utf8',
    method: 'GET',
    path: '/ሴ',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85'),
  },
  {
    name: 'get-unreserved',
    method: 'GET',
    path: '/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f'),
  },
  {
    name: 'get-slashes-normalized',
    method: 'GET',
    path: '//example//',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84'),
  },
  {
    name: 'get-relative-relative-normalized',
    method: 'GET',
    path: '/example1/example2/../..',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'),
  },
  {
    name: 'get-slash-pointless-dot-normalized',
    method: 'GET',
    path: '/./example',
    headers: { host: HOST, 'x-amz-date': AMZ_DATE },
    authorization: auth('host;x-amz-date', 'ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5'),
  },
  {
    name: 'post-sts-header-before',
    method: 'POST',
    path: '/',
    headers: { host: HOST, 'x-amz-security-token': STS_TOKEN, 'x-amz-date': AMZ_DATE },
    token: STS_TOKEN,
    authorization: auth('host;x-amz-date;x-amz-security-token', '85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead'),
  },
  {
    name: 'get-vanilla-with-session-token',
    method: 'GET',
    path: '/',
    headers: { host: HOST, 'x-amz-security-token': '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267', 'x-amz-date': AMZ_DATE },
    token: '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267',
    authorization: auth('host;x-amz-date;x-amz-security-token', '07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8'),
  },
];

/** Headers whose change is caught by a dedicated check before the signature is compared. */
const CHECKED_BEFORE_SIGNATURE = new Set(['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

function requestOf(v: Vector, overrides: Partial<SigV4Request> = {}): SigV4Request {
  return {
    method: v.method,
    path: v.path,
    headers: { ...v.headers, authorization: v.authorization },
    body: Buffer.from(v.body ?? '', 'utf8'),
    ...overrides,
  };
}

function credentialsOf(v: Vector): SigV4Credentials {
  return v.token === undefined ? { accessKeyId: AKID, secretAccessKey: SECRET } : { accessKeyId: AKID, secretAccessKey: SECRET, sessionToken: v.token };
}

/** Verify at the vectors' own instant, with a lookup that knows only AKIDEXAMPLE. */
function verify(req: SigV4Request, creds: SigV4Credentials, now: Date = NOW) {
  return verifySigV4(req, (id) => (id === creds.accessKeyId ? creds : undefined), { now });
}

function reasonOf(verdict: ReturnType<typeof verifySigV4>): string {
  expect(verdict.ok).toBe(false);
  return verdict.ok ? '' : verdict.reason;
}

/** Another value of the same shape, so only the content differs. */
function altered(value: string | string[]): string | string[] {
  return Array.isArray(value) ? [`${value[0]}x`, ...value.slice(1)] : `${value}x`;
}

function signedHeaderNames(authorization: string): string[] {
  return /SignedHeaders=([^,]+)/.exec(authorization)![1]!.split(';');
}

describe('verifySigV4 against the aws-sig-v4-test-suite vectors', () => {
  for (const v of VECTORS) {
    describe(v.name, () => {
      it('accepts the suite signature', () => {
        expect(verify(requestOf(v), credentialsOf(v))).toEqual({ ok: true, accessKeyId: AKID, region: 'us-east-1', service: 'service' });
      });

      it('rejects the signature with its last hex digit changed', () => {
        const last = v.authorization.at(-1)!;
        const tampered = v.authorization.slice(0, -1) + (last === '0' ? '1' : '0');
        expect(reasonOf(verify(requestOf(v, { headers: { ...v.headers, authorization: tampered } }), credentialsOf(v)))).toBe('signature mismatch');
      });

      it('rejects a body altered after signing', () => {
        const body = Buffer.from(`${v.body ?? ''}&injected=1`, 'utf8');
        const reason = reasonOf(verify(requestOf(v, { body }), credentialsOf(v)));
        // A declared body hash is compared first; without one, the real hash changes the canonical request.
        expect(reason).toBe('x-amz-content-sha256' in v.headers ? 'x-amz-content-sha256 does not match the body' : 'signature mismatch');
      });

      for (const name of signedHeaderNames(v.authorization).filter((n) => !CHECKED_BEFORE_SIGNATURE.has(n))) {
        it(`rejects an altered value of the signed header ${name}`, () => {
          const headers = { ...v.headers, authorization: v.authorization, [name]: altered(v.headers[name]!) };
          expect(reasonOf(verify(requestOf(v, { headers }), credentialsOf(v)))).toBe('signature mismatch');
        });
      }

      it('rejects an x-amz-date moved by one second (the date is signed)', () => {
        const headers = { ...v.headers, authorization: v.authorization, 'x-amz-date': '20150830T123601Z' };
        expect(reasonOf(verify(requestOf(v, { headers }), credentialsOf(v)))).toBe('signature mismatch');
      });

      it('accepts at the edge of the 5 minute skew and rejects just outside it, either way', () => {
        const fiveMinutes = 5 * 60_000;
        expect(verify(requestOf(v), credentialsOf(v), new Date(NOW.getTime() + fiveMinutes)).ok).toBe(true);
        expect(verify(requestOf(v), credentialsOf(v), new Date(NOW.getTime() - fiveMinutes)).ok).toBe(true);
        for (const offset of [fiveMinutes + 1000, -(fiveMinutes + 1000)]) {
          const reason = reasonOf(verify(requestOf(v), credentialsOf(v), new Date(NOW.getTime() + offset)));
          expect(reason).toBe('x-amz-date is outside the allowed clock skew');
        }
      });

      it('rejects a request without the session token its credentials require', () => {
        const { 'x-amz-security-token': _dropped, ...headers } = v.headers;
        const creds = { ...credentialsOf(v), sessionToken: v.token ?? 'a-token-the-request-does-not-carry' };
        expect(reasonOf(verify(requestOf(v, { headers: { ...headers, authorization: v.authorization } }), creds))).toBe('missing x-amz-security-token header');
      });
    });
  }

  it('transcribes at least the brief’s vectors', () => {
    const names = VECTORS.map((v) => v.name);
    for (const required of [
      'get-vanilla',
      'get-vanilla-query-order-key-case',
      'get-header-value-trim',
      'post-x-www-form-urlencoded',
      'post-vanilla-query',
      'get-space-normalized',
      'get-utf8',
      'post-sts-header-before',
    ]) {
      expect(names).toContain(required);
    }
  });
});

describe('verifySigV4 session tokens', () => {
  const sts = VECTORS.find((v) => v.name === 'post-sts-header-before')!;

  it('rejects post-sts-header-after: a valid signature that leaves the token unsigned', () => {
    // The suite signs this one with omit_session_token: the token header is added after signing.
    const headerAfter: Vector = {
      ...sts,
      name: 'post-sts-header-after',
      authorization: auth('host;x-amz-date', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'),
    };
    expect(reasonOf(verify(requestOf(headerAfter), credentialsOf(headerAfter)))).toBe('x-amz-security-token is not among the signed headers');
    // The refusal is about the token alone: the same signature without the token, for long-term keys, passes.
    const { 'x-amz-security-token': _token, ...headers } = headerAfter.headers;
    const longTerm = { accessKeyId: AKID, secretAccessKey: SECRET };
    expect(verify(requestOf(headerAfter, { headers: { ...headers, authorization: headerAfter.authorization } }), longTerm).ok).toBe(true);
  });

  it('rejects a token that is not the credentials’ token', () => {
    const creds = { ...credentialsOf(sts), sessionToken: `${STS_TOKEN.slice(0, -2)}A=` };
    expect(reasonOf(verify(requestOf(sts), creds))).toBe('x-amz-security-token does not match the credentials');
  });

  it('rejects a token sent for long-term credentials', () => {
    expect(reasonOf(verify(requestOf(sts), { accessKeyId: AKID, secretAccessKey: SECRET }))).toBe(
      'x-amz-security-token sent for credentials without a session token',
    );
  });
});

describe('verifySigV4 request shape', () => {
  const vanilla = VECTORS.find((v) => v.name === 'get-vanilla')!;
  const form = VECTORS.find((v) => v.name === 'post-x-www-form-urlencoded')!;
  const withHeaders = (v: Vector, headers: Record<string, string | undefined>) =>
    requestOf(v, { headers: { ...v.headers, authorization: v.authorization, ...headers } });

  it('rejects an unknown access key id', () => {
    expect(reasonOf(verify(requestOf(vanilla), { accessKeyId: 'AKIDOTHER', secretAccessKey: SECRET }))).toBe('unknown access key id');
  });

  it('rejects the right access key with the wrong secret', () => {
    expect(reasonOf(verify(requestOf(vanilla), { accessKeyId: AKID, secretAccessKey: `${SECRET}x` }))).toBe('signature mismatch');
  });

  it('rejects a request without authorization or with another algorithm', () => {
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: undefined }), credentialsOf(vanilla)))).toBe('missing authorization header');
    const hmacSha1 = vanilla.authorization.replace('AWS4-HMAC-SHA256', 'AWS4-HMAC-SHA1');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: hmacSha1 }), credentialsOf(vanilla)))).toMatch(/algorithm/);
  });

  it('rejects a malformed authorization header', () => {
    const noSignature = vanilla.authorization.replace(/, Signature=.*/, '');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: noSignature }), credentialsOf(vanilla)))).toMatch(/Signature/);
    const shortScope = vanilla.authorization.replace('/service/aws4_request', '/aws4_request');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: shortScope }), credentialsOf(vanilla)))).toBe('malformed credential scope');
    const upperHex = vanilla.authorization.replace(/Signature=(\w+)/, (_m, sig: string) => `Signature=${sig.toUpperCase()}`);
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: upperHex }), credentialsOf(vanilla)))).toMatch(/hex/);
  });

  it('rejects a missing or malformed x-amz-date, and one whose day differs from the credential scope', () => {
    expect(reasonOf(verify(withHeaders(vanilla, { 'x-amz-date': undefined }), credentialsOf(vanilla)))).toBe('missing x-amz-date header');
    expect(reasonOf(verify(withHeaders(vanilla, { 'x-amz-date': '2015-08-30T12:36:00Z' }), credentialsOf(vanilla)))).toBe('malformed x-amz-date');
    expect(reasonOf(verify(withHeaders(vanilla, { 'x-amz-date': '20151330T123600Z' }), credentialsOf(vanilla)))).toBe('malformed x-amz-date');
    const nextDay = withHeaders(vanilla, { 'x-amz-date': '20150831T000000Z' });
    expect(reasonOf(verify(nextDay, credentialsOf(vanilla), new Date('2015-08-31T00:00:00Z')))).toBe('credential scope date does not match x-amz-date');
  });

  it('requires host (and x-amz-date) among the signed headers, and every signed header present', () => {
    const hostUnsigned = vanilla.authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=x-amz-date');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: hostUnsigned }), credentialsOf(vanilla)))).toBe('host is not among the signed headers');
    const dateUnsigned = vanilla.authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=host');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: dateUnsigned }), credentialsOf(vanilla)))).toBe('x-amz-date is not among the signed headers');
    expect(reasonOf(verify(withHeaders(vanilla, { host: undefined }), credentialsOf(vanilla)))).toBe('signed header host is missing from the request');
  });

  it('rejects SignedHeaders that are not sorted lower-case names', () => {
    const unsorted = vanilla.authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=x-amz-date;host');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: unsorted }), credentialsOf(vanilla)))).toMatch(/sorted/);
    const upper = vanilla.authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=Host;x-amz-date');
    expect(reasonOf(verify(withHeaders(vanilla, { authorization: upper }), credentialsOf(vanilla)))).toMatch(/lower-case/);
  });

  it('needs the real body hash: a matching x-amz-content-sha256 for a swapped body still fails', () => {
    const body = Buffer.from('Param1=value2', 'utf8');
    const hash = createHash('sha256').update(body).digest('hex');
    // The declared hash alone swapped: it no longer describes the body that arrived.
    expect(reasonOf(verify(withHeaders(form, { 'x-amz-content-sha256': hash }), credentialsOf(form)))).toBe('x-amz-content-sha256 does not match the body');
    // Body and declared hash swapped together: consistent, but the header is signed.
    expect(reasonOf(verify({ ...withHeaders(form, { 'x-amz-content-sha256': hash }), body }, credentialsOf(form)))).toBe('signature mismatch');
    expect(reasonOf(verify(withHeaders(form, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }), credentialsOf(form)))).toBe(
      'x-amz-content-sha256 does not match the body',
    );
  });

  it('refuses a repeated x-amz-date rather than picking one', () => {
    const req = requestOf(vanilla, { headers: { ...vanilla.headers, authorization: vanilla.authorization, 'x-amz-date': [AMZ_DATE, AMZ_DATE] } });
    expect(reasonOf(verify(req, credentialsOf(vanilla)))).toBe('repeated x-amz-date header');
  });

  it('reads header names case-insensitively', () => {
    const req = requestOf(vanilla, { headers: { Host: HOST, 'X-Amz-Date': AMZ_DATE, Authorization: vanilla.authorization } });
    expect(verify(req, credentialsOf(vanilla)).ok).toBe(true);
  });

  it('never puts the secret in a reason', () => {
    const reasons = [
      verify(requestOf(vanilla), { accessKeyId: AKID, secretAccessKey: `${SECRET}x` }),
      verify(withHeaders(vanilla, { host: 'elsewhere' }), credentialsOf(vanilla)),
      verify(withHeaders(form, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }), credentialsOf(form)),
    ].map(reasonOf);
    for (const reason of reasons) {
      expect(reason).not.toBe('');
      expect(reason).not.toContain(SECRET);
      expect(reason).not.toContain(SECRET.slice(0, 8));
    }
  });
});

// No suite vector has a path that was percent-encoded on the wire, which is exactly what Bedrock model ids
// with a ":" produce. The canonical request is therefore written out by hand per the spec's steps and signed
// inline with node:crypto; the inline signer is first checked against get-vanilla so it is not taken on trust.
describe('verifySigV4 canonical URI for a path already percent-encoded on the wire', () => {
  const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

  function signCanonical(canonicalRequest: string, scope = '20150830/us-east-1/service'): string {
    const [date, region, service] = scope.split('/') as [string, string, string];
    const stringToSign = ['AWS4-HMAC-SHA256', AMZ_DATE, `${scope}/aws4_request`, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
    const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, date), region), service), 'aws4_request');
    return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  }

  const canonical = (method: string, uri: string, host: string, payloadHash: string) =>
    [method, uri, '', `host:${host}`, `x-amz-date:${AMZ_DATE}`, '', 'host;x-amz-date', payloadHash].join('\n');

  it('the inline signer reproduces get-vanilla', () => {
    expect(signCanonical(canonical('GET', '/', HOST, EMPTY_SHA256))).toBe('5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });

  const bedrockHost = 'bedrock-runtime.us-east-1.amazonaws.com';
  const wirePath = '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke';
  const body = Buffer.from('{"messages":[]}', 'utf8');
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const scope = '20150830/us-east-1/bedrock';
  const requestSignedOver = (uri: string): SigV4Request => ({
    method: 'POST',
    path: wirePath,
    headers: {
      host: bedrockHost,
      'x-amz-date': AMZ_DATE,
      authorization: `AWS4-HMAC-SHA256 Credential=${AKID}/${scope}/aws4_request, SignedHeaders=host;x-amz-date, Signature=${signCanonical(canonical('POST', uri, bedrockHost, bodyHash), scope)}`,
    },
    body,
  });
  const creds = { accessKeyId: AKID, secretAccessKey: SECRET };

  it('encodes each segment of the received path once more (%3A becomes %253A)', () => {
    const verdict = verify(requestSignedOver('/model/us.anthropic.claude-3-5-sonnet-20241022-v2%253A0/invoke'), creds);
    expect(verdict).toEqual({ ok: true, accessKeyId: AKID, region: 'us-east-1', service: 'bedrock' });
  });

  it('rejects a signature over the path as received, without the second encoding', () => {
    expect(reasonOf(verify(requestSignedOver(wirePath), creds))).toBe('signature mismatch');
  });
});
