// An independent AWS Signature Version 4 verifier for the fake Amazon Bedrock server. It is written from the
// specification (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html) with node:crypto
// only, and deliberately imports nothing from @smithy/* or @aws-sdk/*: the gateway signs with
// @smithy/signature-v4, and a check built from the same code would accept whatever that code gets wrong.
// sigv4-verifier.test.ts pins it to the official aws-sig-v4-test-suite vectors.
//
// Canonical URI rule (non-S3 services, which is what Bedrock is): the path is taken exactly as received on the
// wire, normalized (empty and "." segments dropped, ".." removes the previous one), and every segment is
// URI-encoded ONE more time, without percent-decoding first. The spec's "URI-encode each path segment twice"
// counts the encoding the client already applied to put the path on the wire: the test-suite vectors give the
// request line with the raw resource name ("GET /example space/", "GET /ሴ") and expect a single encoding of it
// ("/example%20space/", "/%E1%88%B4"), and aws-c-auth (the reference signer that generates the suite) says it
// "assumes the request's uri path has already been encoded once (in order to go out on the wire)". So a
// Bedrock path received as /model/x-v2%3A0/invoke canonicalizes to /model/x-v2%253A0/invoke, which is what
// @smithy/signature-v4 (uriEscapePath: true) signs. Decoding first would break both the vectors and the SDK.
//
// The query string, by contrast, is decoded and re-encoded once (the suite's get-vanilla-query-order-encoded
// keeps %E1%88%B4 as is), so equivalent spellings on the wire give the same canonical form.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface SigV4Request {
  method: string;
  /** Raw path plus optional ?query, as received on the wire (node's req.url). */
  path: string;
  /**
   * node IncomingHttpHeaders. A header sent several times must be given as an array (req.headersDistinct):
   * node joins repeats with ", ", which the canonical form ("," between values) cannot tell apart from a comma
   * inside one value.
   */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type SigV4Verdict = { ok: true; accessKeyId: string; region: string; service: string } | { ok: false; reason: string };

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SCOPE_TERMINATOR = 'aws4_request';
const DEFAULT_MAX_SKEW_MS = 5 * 60_000;
/** Headers that carry one value each; a repeat is refused rather than guessed at. */
const SINGLE_HEADERS = ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'];

type Failure = { ok: false; reason: string };
const fail = (reason: string): Failure => ({ ok: false, reason });

export function verifySigV4(
  req: SigV4Request,
  lookup: (accessKeyId: string) => SigV4Credentials | undefined,
  opts: { now?: Date; maxSkewMs?: number } = {},
): SigV4Verdict {
  const headers = lowerCaseHeaders(req.headers);
  const repeated = SINGLE_HEADERS.find((name) => (headers.get(name)?.length ?? 0) > 1);
  if (repeated) return fail(`repeated ${repeated} header`);

  const auth = parseAuthorization(single(headers.get('authorization')));
  if ('reason' in auth) return auth;
  const { accessKeyId, scopeDate, region, service, signedHeaders, signature } = auth;

  const amzDate = single(headers.get('x-amz-date'));
  if (amzDate === undefined) return fail('missing x-amz-date header');
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined) return fail('malformed x-amz-date');
  if (amzDate.slice(0, 8) !== scopeDate) return fail('credential scope date does not match x-amz-date');
  const now = opts.now ?? new Date();
  if (Math.abs(now.getTime() - signedAt.getTime()) > (opts.maxSkewMs ?? DEFAULT_MAX_SKEW_MS)) {
    return fail('x-amz-date is outside the allowed clock skew');
  }

  const credentials = lookup(accessKeyId);
  if (!credentials) return fail('unknown access key id');
  const tokenCheck = checkSessionToken(credentials, signedHeaders, single(headers.get('x-amz-security-token')));
  if (tokenCheck) return tokenCheck;

  const headerCheck = checkSignedHeaders(signedHeaders, headers);
  if (headerCheck) return headerCheck;

  const payloadHash = sha256Hex(req.body);
  const declaredHash = single(headers.get('x-amz-content-sha256'));
  if (declaredHash !== undefined && declaredHash !== payloadHash) return fail('x-amz-content-sha256 does not match the body');

  const canonical = canonicalRequest(req.method, req.path, headers, signedHeaders, payloadHash);
  if ('reason' in canonical) return canonical;
  const scope = `${scopeDate}/${region}/${service}/${SCOPE_TERMINATOR}`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonical.text)].join('\n');
  const key = signingKey(credentials.secretAccessKey, scopeDate, region, service);
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest();

  // Both sides are 32 bytes (the signature's shape was checked when parsing), so timingSafeEqual cannot throw.
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return fail('signature mismatch');
  return { ok: true, accessKeyId, region, service };
}

interface ParsedAuthorization {
  accessKeyId: string;
  scopeDate: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

/** `AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=a;b, Signature=hex`. */
function parseAuthorization(header: string | undefined): ParsedAuthorization | Failure {
  if (header === undefined) return fail('missing authorization header');
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space) !== ALGORITHM) return fail(`authorization algorithm is not ${ALGORITHM}`);

  const fields = new Map<string, string>();
  for (const part of header.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return fail('malformed authorization header');
    const name = part.slice(0, eq).trim();
    if (fields.has(name)) return fail(`duplicate ${name} in authorization header`);
    fields.set(name, part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (credential === undefined || signedHeaders === undefined || signature === undefined || fields.size !== 3) {
    return fail('authorization header needs exactly Credential, SignedHeaders and Signature');
  }

  const scope = credential.split('/');
  if (scope.length !== 5 || scope.some((s) => s === '')) return fail('malformed credential scope');
  const [accessKeyId, scopeDate, region, service, terminator] = scope as [string, string, string, string, string];
  if (!/^\d{8}$/.test(scopeDate)) return fail('malformed credential scope date');
  if (terminator !== SCOPE_TERMINATOR) return fail(`credential scope does not end with ${SCOPE_TERMINATOR}`);
  if (!/^[0-9a-f]{64}$/.test(signature)) return fail('signature is not 64 lower-case hex digits');

  return { accessKeyId, scopeDate, region, service, signedHeaders: signedHeaders.split(';'), signature };
}

/** ISO 8601 basic format, `20150830T123600Z`; undefined unless it names a real instant. */
function parseAmzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC rolls 20151332 over into the next year; a round trip rejects such dates.
  const roundTrip = date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return roundTrip === value ? date : undefined;
}

/**
 * SignedHeaders must be the spec's form (lower-case, sorted, no repeats), and must cover host and x-amz-date:
 * unsigned, either could be replaced to replay the request elsewhere or later. Every named header must exist.
 */
function checkSignedHeaders(signed: string[], headers: Map<string, string[]>): Failure | undefined {
  for (let i = 0; i < signed.length; i++) {
    const name = signed[i]!;
    if (name === '' || name !== name.toLowerCase()) return fail('SignedHeaders must be lower-case header names');
    if (i > 0 && signed[i - 1]! >= name) return fail('SignedHeaders must be sorted without repeats');
    if (!headers.has(name)) return fail(`signed header ${name} is missing from the request`);
  }
  if (!signed.includes('host')) return fail('host is not among the signed headers');
  if (!signed.includes('x-amz-date')) return fail('x-amz-date is not among the signed headers');
  return undefined;
}

/** Temporary credentials are only valid with their own token, and the token must be covered by the signature. */
function checkSessionToken(credentials: SigV4Credentials, signed: string[], token: string | undefined): Failure | undefined {
  if (credentials.sessionToken === undefined) {
    return token === undefined ? undefined : fail('x-amz-security-token sent for credentials without a session token');
  }
  if (token === undefined) return fail('missing x-amz-security-token header');
  const want = Buffer.from(credentials.sessionToken, 'utf8');
  const got = Buffer.from(token, 'utf8');
  if (want.length !== got.length || !timingSafeEqual(want, got)) return fail('x-amz-security-token does not match the credentials');
  if (!signed.includes('x-amz-security-token')) return fail('x-amz-security-token is not among the signed headers');
  return undefined;
}

function canonicalRequest(
  method: string,
  rawPath: string,
  headers: Map<string, string[]>,
  signedHeaders: string[],
  payloadHash: string,
): { text: string } | Failure {
  const q = rawPath.indexOf('?');
  const path = q < 0 ? rawPath : rawPath.slice(0, q);
  const query = canonicalQuery(q < 0 ? '' : rawPath.slice(q + 1));
  if (query === undefined) return fail('malformed percent-encoding in query string');
  const headerLines = signedHeaders.map((name) => `${name}:${canonicalHeaderValue(headers.get(name)!)}\n`).join('');
  const text = [method, canonicalUri(path), query, headerLines, signedHeaders.join(';'), payloadHash].join('\n');
  return { text };
}

/** See the file comment: normalize the wire path, then encode each segment once more (the spec's second pass). */
function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  if (segments.length === 0) return '/';
  const trailing = path.endsWith('/') ? '/' : '';
  return `/${segments.map(uriEncode).join('/')}${trailing}`;
}

/** Decode each name and value, encode them per the spec, sort by encoded name then value, join with "&". */
function canonicalQuery(query: string): string | undefined {
  const pairs: [string, string][] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const value = decode(eq < 0 ? '' : part.slice(eq + 1));
    if (name === undefined || value === undefined) return undefined;
    pairs.push([uriEncode(name), uriEncode(value)]);
  }
  pairs.sort(([an, av], [bn, bv]) => compare(an, bn) || compare(av, bv));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

function decode(component: string): string | undefined {
  try {
    return decodeURIComponent(component);
  } catch {
    return undefined;
  }
}

/** Encoded strings are ASCII, so code-unit order is the byte order the spec sorts by. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The spec's UriEncode: every UTF-8 byte outside A-Z a-z 0-9 - . _ ~ becomes %XX with upper-case hex. */
function uriEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Trim each value, collapse inner runs of whitespace (folded lines included) to one space, join repeats with ",". */
function canonicalHeaderValue(values: string[]): string {
  return values.map((v) => v.trim().replace(/\s+/g, ' ')).join(',');
}

/** Header names are case-insensitive; keep every value, in order, under the lower-case name. */
function lowerCaseHeaders(headers: SigV4Request['headers']): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), ...(Array.isArray(value) ? value : [value])]);
  }
  return out;
}

/** The value of a header from SINGLE_HEADERS (repeats were refused up front). */
function single(values: string[] | undefined): string | undefined {
  return values?.[0];
}

function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  let key: Buffer = Buffer.from(`AWS4${secret}`, 'utf8');
  for (const part of [date, region, service, SCOPE_TERMINATOR]) key = createHmac('sha256', key).update(part, 'utf8').digest();
  return key;
}
