// The request payload of a POST family: a JSON object (parsed once) or a multipart form (parsed once), with
// the public model it names, and a per-backend body builder that rewrites the model for the upstream.
import type { Request } from 'express';
import type { AppLimits } from '../app.js';
import type { CompiledBackend } from '../config/table.js';
import { encodeMultipart, MultipartError, parseMultipart, type MultipartForm } from '../proxy/multipart.js';
import type { OutgoingBody } from '../proxy/forward.js';
import { errors } from './errors.js';

export type Payload =
  | {
      readonly kind: 'json';
      readonly raw: Buffer;
      readonly json: Record<string, unknown>;
      readonly model: string;
      /** False when another JSON parser could read a different model from the raw bytes (see modelIsUnambiguous). */
      readonly rawIsSafe: boolean;
    }
  | { readonly kind: 'multipart'; readonly raw: Buffer; readonly contentType: string; readonly form: MultipartForm; readonly model: string };

const MULTIPART = /^multipart\/form-data\b/i;
const ANY_MULTIPART = /^\s*multipart\//i;
const JSON_TYPE = 'application/json';

/** What an endpoint accepts besides JSON; `path` names it in the refusal. */
export interface PayloadAccept {
  readonly multipart: boolean;
  readonly path: string;
}

/**
 * Refuses a form sent to an endpoint that takes JSON only, before a byte of it is read: a form there would be
 * buffered under the (larger) upload limit for nothing. Other content types are still read as JSON, as clients
 * such as `curl -d` send JSON labelled as a urlencoded form or with no type at all.
 */
export function checkContentType(req: Request, accept: PayloadAccept): void {
  const contentType = req.headers['content-type'] ?? '';
  if (!accept.multipart && ANY_MULTIPART.test(contentType)) throw errors.unsupportedContentType(contentType, accept.path);
}

export async function readPayload(
  req: Request,
  limits: AppLimits,
  read: (req: Request, limit: number) => Promise<Buffer>,
  accept: PayloadAccept,
): Promise<Payload> {
  // A compressed body would be parsed as garbage (a misleading "not valid JSON") or, worse, forwarded with a
  // Content-Encoding the rewritten bytes no longer match. Refuse it plainly; "identity" means uncompressed.
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') throw errors.unsupportedEncoding();
  checkContentType(req, accept);
  const contentType = req.headers['content-type'] ?? '';
  if (MULTIPART.test(contentType)) {
    const raw = await read(req, limits.multipartBytes);
    let form: MultipartForm;
    try {
      form = await parseMultipart(raw, contentType);
    } catch (err) {
      if (err instanceof MultipartError) throw errors.malformedMultipart(err.message); // messages are constants
      throw err;
    }
    if (!form.model) throw errors.missingModel();
    // busboy keeps the first `model`, many servers (FastAPI/starlette, so vLLM) the last: with two, the
    // gateway would authorize one model and the upstream serve another.
    if (form.parts.filter((p) => p.name === 'model').length > 1) throw errors.duplicateModel();
    return { kind: 'multipart', raw, contentType, form, model: form.model };
  }
  const raw = await read(req, limits.jsonBytes);
  const text = raw.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw errors.malformedJson();
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw errors.notAnObject();
  const model = (json as Record<string, unknown>)['model'];
  if (typeof model !== 'string' || model === '') throw errors.missingModel();
  return { kind: 'json', raw, json: json as Record<string, unknown>, model, rawIsSafe: modelIsUnambiguous(text) };
}

const ESCAPED_MODEL_LETTER = /\\u006[45cdf]/i; // m o d e l as \u escapes

/**
 * JSON.parse keeps the last of duplicate keys; some parsers keep the first. When the client's bytes are
 * forwarded as they are, a body with two `model` keys (or one spelled with escapes) could be authorized for one
 * model and served as another. Such bodies are re-serialised instead (one `model`, the one authorized). Cheap
 * and conservative: a nested "model" key (e.g. in a tool schema) also just costs a re-serialisation.
 */
export function modelIsUnambiguous(text: string): boolean {
  const first = text.indexOf('"model"');
  return first === text.lastIndexOf('"model"') && !ESCAPED_MODEL_LETTER.test(text);
}

/**
 * Body for one backend. When the upstream model name equals the public one the client's bytes go as they came
 * (no re-serialisation at all) unless their `model` is ambiguous; otherwise the model is rewritten, once per
 * distinct upstream name.
 */
export function bodyBuilder(p: Payload): (backend: CompiledBackend) => OutgoingBody {
  const cache = new Map<string, OutgoingBody>();
  return (backend) => {
    if (backend.model === p.model && (p.kind === 'multipart' || p.rawIsSafe)) {
      return { body: p.raw, contentType: p.kind === 'json' ? JSON_TYPE : p.contentType };
    }
    let out = cache.get(backend.model);
    if (!out) {
      if (p.kind === 'json') {
        p.json['model'] = backend.model;
        out = { body: Buffer.from(stringifyClientJson(p.json), 'utf8'), contentType: JSON_TYPE };
      } else {
        out = encodeMultipart(p.form, backend.model);
      }
      cache.set(backend.model, out);
    }
    return out;
  };
}

/**
 * JSON.parse accepts nesting far deeper than JSON.stringify can recurse (a 20 MB body of "[[[[…" parses, then
 * overflows the stack when re-serialised). That is the client's fault, so it is a 400, not an upstream error.
 */
export function stringifyClientJson(json: Record<string, unknown>): string {
  try {
    return JSON.stringify(json);
  } catch (err) {
    if (err instanceof RangeError) throw errors.nestedTooDeeply();
    throw err;
  }
}
