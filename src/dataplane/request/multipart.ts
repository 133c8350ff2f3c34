// multipart/form-data for the upload families (audio, image edits, videos): parsed once with busboy from the
// buffered body, then re-encoded with the `model` field rewritten. File parts, part names and filenames are kept
// as the exact bytes the client sent; only the envelope (boundary, part headers) is rebuilt.
import { randomBytes } from 'node:crypto';
import busboy from 'busboy';

/**
 * `name` and `filename` are byte strings: one character per byte of the part header, as the client sent it
 * (Buffer latin1 encoding), so that a name that is not UTF-8 reaches the upstream unchanged. ASCII names (every
 * name the gateway itself looks at, such as `model`) read as usual.
 */
interface MultipartPart {
  readonly name: string;
  /** Field text, or the file's bytes. */
  readonly value: string | Buffer;
  /** Present on file parts that carried a filename (a byte string, like `name`). */
  readonly filename?: string;
  /** Content type of the part as the client sent it (files; fields only when not text/plain). */
  readonly contentType?: string;
}

export interface MultipartForm {
  readonly parts: readonly MultipartPart[];
  /** Value of the first `model` field, if any. */
  readonly model: string | undefined;
}

export class MultipartError extends Error {}

/**
 * Most parts a form may have. OpenAI's upload forms have a handful (image edits: up to 16 images); without a
 * cap, 100 MB of tiny parts costs tens of seconds of CPU and hundreds of MB of part objects.
 */
export const MAX_PARTS = 1_000;

/**
 * The body is fed to busboy in slices with a turn of the event loop between them: busboy parses a write
 * synchronously, so one large upload would otherwise stall every other request for seconds.
 */
const SLICE_BYTES = 256 * 1024;

/** Parses a complete multipart body. Sizes were already bounded by the body reader, so busboy's size limits are lifted. */
export async function parseMultipart(body: Buffer, contentType: string): Promise<MultipartForm> {
  // Header parameters are read as latin1, i.e. byte for byte: read as UTF-8, a filename that is not UTF-8 became
  // U+FFFD and reached the upstream changed.
  const form = await parseWith(body, contentType, 'latin1');
  if (!form.parts.some((p) => p.filename !== undefined && !isAscii(p.filename)) || !mentionsExtendedFilename(body)) return form;
  return withExtendedFilenames(form, await parseWith(body, contentType, 'utf8'));
}

/** Whether `filename*=` (any case) occurs anywhere in the body: a cheap necessary condition for an RFC 5987 filename. */
function mentionsExtendedFilename(body: Buffer): boolean {
  for (let at = body.indexOf('*='); at >= 0; at = body.indexOf('*=', at + 2)) {
    if (at >= 8 && body.toString('latin1', at - 8, at).toLowerCase() === 'filename') return true;
  }
  return false;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is everything outside 0x00-0x7f; NUL is its lower bound, not a match.
const NON_ASCII = /[^\x00-\x7f]/;
const isAscii = (s: string) => !NON_ASCII.test(s);

/**
 * busboy prefers an RFC 5987 `filename*=charset''…` (which RFC 7578 forbids in forms, but old clients send) and
 * decodes it with its own charset, so that filename is text, not bytes: it goes on as UTF-8. It is told apart by
 * parsing again with UTF-8 as the default: a plain parameter with a non-ASCII byte reads differently as latin1
 * and as UTF-8, an extended one the same. Only forms with a non-ASCII filename and `filename*` somewhere pay this.
 */
function withExtendedFilenames(latin1: MultipartForm, utf8: MultipartForm): MultipartForm {
  const parts = latin1.parts.map((p, i) => {
    const other = utf8.parts[i];
    if (p.filename === undefined || isAscii(p.filename) || other?.filename !== p.filename) return p;
    return { ...p, filename: Buffer.from(p.filename, 'utf8').toString('latin1') };
  });
  return { parts, model: latin1.model };
}

function parseWith(body: Buffer, contentType: string, paramCharset: 'latin1' | 'utf8'): Promise<MultipartForm> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        preservePath: true,
        defParamCharset: paramCharset,
        // busboy signals partsLimit as the limit-th part completes, so the limit is one above the parts allowed.
        limits: { fieldSize: body.length, fileSize: body.length, parts: MAX_PARTS + 1 },
      });
    } catch {
      reject(new MultipartError('no valid boundary in the content type'));
      return;
    }
    const parts: MultipartPart[] = [];
    let model: string | undefined;
    let pending = 0;
    let closed = false;
    let settled = false;
    const done = () => {
      if (settled || !closed || pending > 0) return;
      settled = true;
      resolve({ parts, model });
    };
    // Every failure path ends here once. A truncated body errors the open file stream as well as busboy, and
    // an 'error' event without a listener would crash the process.
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      reject(new MultipartError(message));
    };
    bb.on('field', (name, value, info) => {
      if (name === 'model' && model === undefined) model = value;
      parts.push(info.mimeType && info.mimeType !== 'text/plain' ? { name, value, contentType: info.mimeType } : { name, value });
    });
    bb.on('file', (name, stream, info) => {
      const index = parts.length;
      parts.push({ name, value: Buffer.alloc(0) }); // placeholder keeps the client's part order
      pending++;
      const chunks: Buffer[] = [];
      stream.on('error', () => fail('malformed or truncated body'));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        parts[index] = {
          name,
          value: joinChunks(chunks),
          ...(info.filename !== undefined ? { filename: info.filename } : {}),
          contentType: info.mimeType,
        };
        pending--;
        done();
      });
    });
    bb.on('error', () => fail('malformed or truncated body'));
    bb.on('partsLimit', () => fail(`more than ${MAX_PARTS} parts`));
    bb.on('close', () => {
      closed = true;
      done();
    });
    void (async () => {
      for (let at = 0; at < body.length && !settled; at += SLICE_BYTES) {
        bb.write(body.subarray(at, at + SLICE_BYTES));
        await new Promise((r) => setImmediate(r));
      }
      // After a failure the rest is not worth parsing.
      if (settled) bb.destroy();
      else bb.end();
    })();
  });
}

/**
 * The file's bytes. busboy hands them out as views into the body it was given; when they are contiguous the
 * part is a view too, so an upload is not copied once more (a copy of the whole file is a large share of its CPU).
 */
function joinChunks(chunks: Buffer[]): Buffer {
  const first = chunks[0];
  if (first === undefined) return Buffer.alloc(0);
  let end = first.byteOffset + first.length;
  for (let i = 1; i < chunks.length; i++) {
    const c = chunks[i]!;
    if (c.buffer !== first.buffer || c.byteOffset !== end) return Buffer.concat(chunks);
    end += c.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

/** WHATWG form-data escaping of names in part headers. */
function escapeName(s: string): string {
  return s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export interface EncodedMultipart {
  readonly body: Buffer;
  readonly contentType: string;
}

/** Re-encodes the form; `model` replaces the value of every `model` field. Names and filenames go out as the bytes they hold. */
export function encodeMultipart(form: MultipartForm, model: string): EncodedMultipart {
  const boundary = `----model-gateway-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of form.parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(part.name)}"`;
    if (part.filename !== undefined) head += `; filename="${escapeName(part.filename)}"`;
    head += '\r\n';
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`;
    head += '\r\n';
    chunks.push(Buffer.from(head, 'latin1'));
    const value = part.name === 'model' && typeof part.value === 'string' ? model : part.value;
    chunks.push(typeof value === 'string' ? Buffer.from(value, 'utf8') : value, CRLF);
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const CRLF = Buffer.from('\r\n');
