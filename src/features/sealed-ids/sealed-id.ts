// Sealed ids (pure): the id a client gets for a video task or a stored response wraps the upstream id together
// with what any replica needs to serve a follow-up call without a database: the public model (route) and the
// backend that holds the object, and the GatewayToken that owns it. The wrapper is authenticated with
// HMAC-SHA256 so a client can neither forge nor alter it; it is NOT encrypted: the payload holds no secret
// (names only), and a client may decode its own ids.
//
// Wire form: `<prefix><base64url(body || mac)>` with prefix `video_` or `resp_`, so ids look familiar and are
// URL-safe. body = version(1) flags(1) then four u16-length-prefixed fields: upstream id (UTF-8, or raw bytes
// when it is lowercase hex), model, backend, owner (UTF-8); a background response's id then holds what its create
// recorded (a u32 of input tokens, the u16-length-prefixed request id), so the call that sees it finish can record
// the rest on any replica; a video's, its create's request id (input 0), which the credit of a failed video names. mac = first 16 bytes (128 bits) of HMAC-SHA256(subkey, prefix || 0x00 || body). The prefix
// is under the MAC, so a video id can never be replayed as a response id.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export type SealedKind = 'video' | 'response';

export const SEALED_PREFIX: Readonly<Record<SealedKind, string>> = { video: 'video_', response: 'resp_' };

export interface SealedRef {
  readonly kind: SealedKind;
  /** The id the upstream backend knows the object by. */
  readonly upstreamId: string;
  /** Public model name of the route that created the object. */
  readonly model: string;
  /** Name of the backend (inside that route) that holds the object. */
  readonly backend: string;
  /** `namespace/name` of the GatewayToken that created the object. */
  readonly owner: string;
  /** Set on a response created in background mode (not streamed), and on a video: what its create recorded. */
  readonly background?: BackgroundCreate;
}

/** What the create of a background response recorded: its input estimate, in the usage record of its request. */
export interface BackgroundCreate {
  /** The input tokens the create's usage record holds (the gateway's estimate: the model had not run yet). */
  readonly inputTokens: number;
  /** The create's request id (`reqId` of its usage record). */
  readonly reqId: string;
}

export const MIN_KEY_BYTES = 32;
const VERSION = 1;
const MAC_BYTES = 16;
/** Bit 0: the upstream id began with the same prefix, which was dropped to keep the id short. */
const FLAG_PREFIX_STRIPPED = 1;
/** Bit 1: the (rest of the) upstream id is lowercase hex, stored as raw bytes (OpenAI ids are: half the size). */
const FLAG_HEX = 2;
/** Bit 2: a background response's id, followed by what its create recorded (BackgroundCreate). */
const FLAG_BACKGROUND = 4;
const MAX_U32 = 0xffffffff;
const LOWER_HEX = /^(?:[0-9a-f]{2})+$/;
const MAX_FIELD_BYTES = 0xffff;
/** Longest id accepted for verification: bounds the work an attacker can make us do per request. */
export const MAX_SEALED_ID_CHARS = 4096;
const HKDF_INFO = Buffer.from('model-gateway sealed-id v1');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export class IdSealer {
  readonly #subkeys: readonly Buffer[];

  /** keys: the first signs new ids, every key verifies (rotation). Each at least 32 bytes. */
  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new Error('sealed ids need at least one key');
    this.#subkeys = keys.map((k, i) => {
      if (k.byteLength < MIN_KEY_BYTES) throw new Error(`sealed-id key #${i + 1} is shorter than ${MIN_KEY_BYTES} bytes`);
      // A purpose-bound subkey, so the same Secret could later key something else without cross-use.
      return Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), HKDF_INFO, 32));
    });
  }

  seal(ref: SealedRef): string {
    const prefix = SEALED_PREFIX[ref.kind];
    const stripped = ref.upstreamId.startsWith(prefix) && ref.upstreamId.length > prefix.length;
    const upstream = stripped ? ref.upstreamId.slice(prefix.length) : ref.upstreamId;
    const hex = LOWER_HEX.test(upstream);
    const fields = [hex ? Buffer.from(upstream, 'hex') : upstream, ref.model, ref.backend, ref.owner];
    const bg = ref.background;
    const flags = (stripped ? FLAG_PREFIX_STRIPPED : 0) | (hex ? FLAG_HEX : 0) | (bg ? FLAG_BACKGROUND : 0);
    const parts: Buffer[] = [Buffer.from([VERSION, flags])];
    const field = (f: string | Buffer) => {
      const bytes = typeof f === 'string' ? Buffer.from(f, 'utf8') : f;
      if (bytes.length > MAX_FIELD_BYTES) throw new Error('sealed-id field too long');
      const len = Buffer.alloc(2);
      len.writeUInt16BE(bytes.length);
      parts.push(len, bytes);
    };
    for (const f of fields) field(f);
    if (bg) {
      const n = Buffer.alloc(4);
      n.writeUInt32BE(Math.min(MAX_U32, Math.max(0, Math.round(bg.inputTokens))));
      parts.push(n);
      field(bg.reqId);
    }
    const body = Buffer.concat(parts);
    return prefix + Buffer.concat([body, mac(this.#subkeys[0]!, prefix, body)]).toString('base64url');
  }

  /** The reference inside a genuine id of the expected kind, or undefined for anything else. */
  unseal(kind: SealedKind, id: string): SealedRef | undefined {
    const prefix = SEALED_PREFIX[kind];
    if (typeof id !== 'string' || id.length > MAX_SEALED_ID_CHARS || !id.startsWith(prefix)) return undefined;
    const encoded = id.slice(prefix.length);
    if (!BASE64URL.test(encoded)) return undefined;
    const raw = Buffer.from(encoded, 'base64url');
    // Node's decoder ignores stray trailing bits; insisting on the canonical form means every changed character
    // changes the bytes, so no two strings name the same id.
    if (raw.length < 2 + 8 + MAC_BYTES || raw.toString('base64url') !== encoded) return undefined;
    const body = raw.subarray(0, raw.length - MAC_BYTES);
    const given = raw.subarray(raw.length - MAC_BYTES);
    // Try every key (no early exit on mismatch): the work does not depend on how much of a MAC was right.
    let ok = false;
    for (const k of this.#subkeys) if (timingSafeEqual(mac(k, prefix, body), given)) ok = true;
    if (!ok) return undefined;
    return parseBody(kind, prefix, body);
  }
}

function mac(subkey: Buffer, prefix: string, body: Buffer): Buffer {
  return createHmac('sha256', subkey)
    .update(prefix)
    .update(Buffer.from([0]))
    .update(body)
    .digest()
    .subarray(0, MAC_BYTES);
}

/** Parses an authenticated body; a malformed one (only possible with a leaked key or a future version) is rejected. */
function parseBody(kind: SealedKind, prefix: string, body: Buffer): SealedRef | undefined {
  if (body[0] !== VERSION) return undefined;
  const flags = body[1]!;
  const fields: string[] = [];
  let at = 2;
  for (let i = 0; i < 4; i++) {
    if (at + 2 > body.length) return undefined;
    const len = body.readUInt16BE(at);
    at += 2;
    if (at + len > body.length) return undefined;
    fields.push(body.toString(i === 0 && flags & FLAG_HEX ? 'hex' : 'utf8', at, at + len));
    at += len;
  }
  const [upstream, model, backend, owner] = fields as [string, string, string, string];
  const upstreamId = flags & FLAG_PREFIX_STRIPPED ? prefix + upstream : upstream;
  if (!(flags & FLAG_BACKGROUND)) return at === body.length ? { kind, upstreamId, model, backend, owner } : undefined;
  if (at + 6 > body.length) return undefined;
  const inputTokens = body.readUInt32BE(at);
  const len = body.readUInt16BE(at + 4);
  at += 6;
  if (at + len !== body.length) return undefined;
  return { kind, upstreamId, model, backend, owner, background: { inputTokens, reqId: body.toString('utf8', at, at + len) } };
}
