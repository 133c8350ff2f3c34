// Where the sealed-id HMAC keys come from: --id-keys / MG_ID_KEYS (comma-separated), or --id-keys-file /
// MG_ID_KEYS_FILE (a mounted Secret: keys separated by commas, whitespace or newlines; `#` starts a comment).
// Each key is base64 (standard or URL-safe) or hex, optionally tagged `hex:` / `base64:`, and at least 32
// bytes. The first key signs new ids; all keys verify them. Without any configuration the app generates a
// random key (generateIdKey) and warns: fine for one local process, but ids then die with the process.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MIN_KEY_BYTES } from './sealed-id.js';

export interface IdKeyOptions {
  /** Comma-separated keys (flag or env). */
  readonly keys?: string | undefined;
  /** Path of a file holding the keys. */
  readonly keysFile?: string | undefined;
}

export interface IdKeys {
  /** Empty when nothing is configured: the app then generates a key and warns (see GENERATED_KEY_WARNING). */
  readonly keys: readonly Buffer[];
  readonly source: 'keys' | 'file' | 'none';
}

/** A message safe to log or print: it names the source and the key's position, never key material. */
export class IdKeyError extends Error {
  override readonly name = 'IdKeyError';
}

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Decodes one key; hex wins for an even-length all-hex string (64 hex digits = 32 bytes). */
export function decodeKey(text: string, where: string): Buffer {
  let body = text.trim();
  let form: 'hex' | 'base64' | undefined;
  const tagged = /^(hex|base64):(.*)$/s.exec(body);
  if (tagged) {
    form = tagged[1] as 'hex' | 'base64';
    body = tagged[2]!.trim();
  }
  if (form === undefined) form = HEX.test(body) && body.length % 2 === 0 ? 'hex' : 'base64';
  let key: Buffer;
  if (form === 'hex') {
    if (!HEX.test(body) || body.length % 2 !== 0) throw new IdKeyError(`${where} is not valid hex`);
    key = Buffer.from(body, 'hex');
  } else {
    if (!BASE64.test(body)) throw new IdKeyError(`${where} is neither hex nor base64`);
    key = Buffer.from(
      body.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/')),
      'base64',
    );
  }
  if (key.length < MIN_KEY_BYTES) {
    throw new IdKeyError(`${where} decodes to ${key.length} bytes; sealed-id keys need at least ${MIN_KEY_BYTES} (e.g. openssl rand -base64 32)`);
  }
  return key;
}

/**
 * Splits a key list (commas, whitespace, newlines; `#` comments to end of line) and decodes each. Messages
 * read "<source> key #N …", or "key #N …" without a source (to complete a flag name).
 */
export function parseIdKeys(text: string, source?: string): Buffer[] {
  const items = text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, ''))
    .join(',')
    .split(/[\s,]+/)
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new IdKeyError(source ? `${source} holds no keys` : 'must hold at least one key');
  return items.map((item, i) => decodeKey(item, `${source ? `${source} ` : ''}key #${i + 1}`));
}

export function generateIdKey(): Buffer {
  return randomBytes(32);
}

/**
 * Resolves the configured keys; setting both sources is refused because which one wins would be a guess.
 * Errors (IdKeyError) name the flag and the key's position, never key material.
 */
export async function loadIdKeys(options: IdKeyOptions): Promise<IdKeys> {
  const keys = options.keys?.trim() ? options.keys : undefined;
  const file = options.keysFile?.trim() ? options.keysFile.trim() : undefined;
  if (keys !== undefined && file !== undefined) {
    throw new IdKeyError('set either --id-keys (MG_ID_KEYS) or --id-keys-file (MG_ID_KEYS_FILE), not both');
  }
  if (keys !== undefined) return { keys: parseIdKeys(keys, '--id-keys'), source: 'keys' };
  if (file !== undefined) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new IdKeyError(`cannot read --id-keys-file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    return { keys: parseIdKeys(text, `--id-keys-file ${file}`), source: 'file' };
  }
  return { keys: [], source: 'none' };
}

export const GENERATED_KEY_WARNING =
  'no sealed-id key configured (--id-keys / MG_ID_KEYS / --id-keys-file): using a random key; video and stored-response ids will not survive a restart and other replicas cannot serve them';
