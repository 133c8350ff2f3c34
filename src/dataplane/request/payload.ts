// The request payload of a POST family: a JSON object (scanned once, see json-body.ts) or a multipart form
// (parsed once), with the public model it names, and a per-backend body builder that rewrites the model for
// the upstream.
import type { Request } from 'express';
import type { BodyLimits } from '../../model/body-limits.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { encodeMultipart, MultipartError, parseMultipart, type MultipartForm } from './multipart.js';
import { errors } from '../../model/errors.js';
import type { ExchangeTransform, OutgoingBody } from '../exchange/transform.js';
import { readJsonBody, type JsonBody } from './json-body.js';
import { WantedKeys } from './json-scan.js';

/**
 * The top-level members of a JSON body the gateway reads: the model, whether to stream, and what the wired features
 * declare they read (Feature.reads). Every other member is checked but skipped unread. Made once per app.
 */
export function wantedMembers(features: readonly { readonly reads: readonly string[] }[]): WantedKeys {
  return new WantedKeys(['model', 'stream', ...features.flatMap((f) => f.reads)]);
}

export type Payload =
  | {
      readonly kind: 'json';
      readonly raw: Buffer;
      readonly json: JsonBody;
      readonly model: string;
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
  limits: BodyLimits,
  read: (req: Request, limit: number) => Promise<Buffer>,
  accept: PayloadAccept,
  members: WantedKeys,
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
  const scanned = readJsonBody(raw, members);
  const json = scanned instanceof Promise ? await scanned : scanned;
  const model = json.string('model');
  if (model === undefined || model === '') throw errors.missingModel();
  return { kind: 'json', raw, json, model };
}

/**
 * The model rename, as a transform: a backend whose upstream model name differs from the public one gets it in
 * the body's `model` (the form's `model` field for uploads).
 */
export function modelRename(publicModel: string): ExchangeTransform {
  return { members: (backend) => (backend.model === publicModel ? undefined : { model: JSON.stringify(backend.model) }) };
}

/**
 * Body for one backend, given the members the exchange's transforms set for it. With none, the client's bytes go
 * as they came, unless a member the gateway reads is ambiguous (duplicated, or its key written with escapes):
 * parsers differ on which duplicate counts, so the upstream could serve another model, or continue another
 * response, than the one the gateway checked. Otherwise the members are spliced in (the ambiguous ones collapsed
 * to the value the gateway read), once per distinct set of members. A form only takes a `model`.
 */
export function bodyBuilder(
  p: Payload,
  membersOf: (backend: CompiledBackend) => Readonly<Record<string, string>> | undefined,
): (backend: CompiledBackend) => OutgoingBody {
  let cache: Map<string, OutgoingBody> | undefined; // made when a body is rewritten: most requests go as they came
  if (p.kind === 'multipart') {
    return (backend) => {
      const renamed = membersOf(backend)?.['model'];
      const model = renamed === undefined ? p.model : (JSON.parse(renamed) as string);
      if (model === p.model) return { body: p.raw, contentType: p.contentType };
      let out = (cache ??= new Map()).get(model);
      if (!out) cache.set(model, (out = encodeMultipart(p.form, model)));
      return out;
    };
  }
  const collapse = p.json.ambiguousMembers();
  return (backend) => {
    const members = membersOf(backend);
    if (!members && !collapse) return { body: p.raw, contentType: JSON_TYPE };
    const key = members ? JSON.stringify(members) : '';
    let out = (cache ??= new Map()).get(key);
    if (!out) cache.set(key, (out = { body: p.json.with({ ...collapse, ...members }), contentType: JSON_TYPE }));
    return out;
  };
}
