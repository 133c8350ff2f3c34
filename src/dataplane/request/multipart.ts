// multipart/form-data for the upload families (audio, image edits, videos): parsed once with busboy from the
// buffered body. A rewritten form is the client's body with only the `model` field's value replaced: every other
// byte (part headers, values, whatever their charset or filename) reaches the upstream as the client sent it.
import { createRequire } from 'node:module';
import busboy from 'busboy';

/** `name` is a byte string: one character per byte of the part header, as the client sent it (Buffer latin1 encoding). */
interface MultipartPart {
  readonly name: string;
  /** Field text (decoded as busboy does: UTF-8 unless the part declares a charset), or the file's bytes. */
  readonly value: string | Buffer;
}

export interface MultipartForm {
  readonly parts: readonly MultipartPart[];
  /** Value of the first `model` field, if any. */
  readonly model: string | undefined;
  /** The body as received, and where each `model` field's value lies in it ([start, end) byte offsets). */
  readonly body: Buffer;
  readonly contentType: string;
  readonly modelSpans: readonly (readonly [number, number])[];
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

// busboy's own content-type parser, so that the boundary found here is the one busboy splits on.
const { parseContentType } = createRequire(import.meta.url)('busboy/lib/utils.js') as {
  parseContentType(s: string): { params: Record<string, string> } | undefined;
};

/**
 * Where each delimiter (`\r\n--boundary`) ends in the body, found as busboy finds them: it searches the body
 * with a CRLF put in front, so a body may also open with `--boundary`.
 */
function delimiterEnds(body: Buffer, boundary: string): number[] {
  const needle = Buffer.from(`\r\n--${boundary}`); // UTF-8, as busboy's streamsearch makes it
  const ends: number[] = [];
  let at = 0;
  if (body.subarray(0, needle.length - 2).equals(needle.subarray(2))) ends.push((at = needle.length - 2));
  for (let i = body.indexOf(needle, at); i >= 0; i = body.indexOf(needle, i + needle.length)) ends.push(i + needle.length);
  return ends;
}

/** Parses a complete multipart body. Sizes were already bounded by the body reader, so busboy's size limits are lifted. */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartForm> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    const boundary = parseContentType(contentType)?.params['boundary'];
    try {
      if (boundary === undefined) throw new Error('no boundary');
      bb = busboy({
        headers: { 'content-type': contentType },
        preservePath: true,
        // Names are read byte for byte; only `model` is looked at, and it is ASCII.
        defParamCharset: 'latin1',
        // busboy signals partsLimit as the limit-th part completes, so the limit is one above the parts allowed.
        limits: { fieldSize: body.length, fileSize: body.length, parts: MAX_PARTS + 1 },
      });
    } catch {
      reject(new MultipartError('no valid boundary in the content type'));
      return;
    }
    // The body is fed one part at a time (from just after a delimiter to the end of the next one), each write
    // awaited, so every part busboy reports belongs to the piece being fed: that is how its bytes are found.
    const ends = delimiterEnds(body, boundary);
    let piece = 0;
    let pieceHasPart = false;
    const parts: MultipartPart[] = [];
    const modelSpans: [number, number][] = [];
    let model: string | undefined;
    let pending = 0;
    let closed = false;
    let settled = false;
    let wake: (() => void) | undefined;
    const done = () => {
      if (settled || !closed || pending > 0) return;
      settled = true;
      resolve({ parts, model, body, contentType, modelSpans });
    };
    // Every failure path ends here once. A truncated body errors the open file stream as well as busboy, and
    // an 'error' event without a listener would crash the process.
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      wake?.();
      reject(new MultipartError(message));
    };
    // Where the part being fed starts; undefined (and the form refused) if busboy's parts and ours disagree.
    const partStart = (): number | undefined => {
      if (piece === 0 || pieceHasPart) return undefined;
      pieceHasPart = true;
      return ends[piece - 1];
    };
    bb.on('field', (name, value) => {
      const start = partStart();
      const end = ends[piece];
      if (start === undefined || end === undefined) return fail('malformed body');
      if (name === 'model') {
        model ??= value;
        const head = body.indexOf('\r\n\r\n', start + 2) + 4;
        modelSpans.push([head, end - Buffer.byteLength(`\r\n--${boundary}`)]);
      }
      parts.push({ name, value });
    });
    bb.on('file', (name, stream) => {
      if (partStart() === undefined) return fail('malformed body');
      const index = parts.length;
      parts.push({ name, value: Buffer.alloc(0) }); // placeholder keeps the client's part order
      pending++;
      const chunks: Buffer[] = [];
      stream.on('error', () => fail('malformed or truncated body'));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        parts[index] = { name, value: joinChunks(chunks) };
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
    const write = (chunk: Buffer) =>
      new Promise<void>((r) => {
        wake = r;
        bb.write(chunk, () => r());
      });
    void (async () => {
      for (let from = 0; piece <= ends.length && !settled; piece++, pieceHasPart = false) {
        const to = ends[piece] ?? body.length;
        for (let at = from; at < to && !settled; at += SLICE_BYTES) {
          await write(body.subarray(at, Math.min(at + SLICE_BYTES, to)));
          await new Promise((r) => setImmediate(r));
        }
        from = to;
      }
      // After a failure the rest is not worth parsing.
      if (settled) bb.destroy();
      else bb.end();
    })();
  });
}

/** The value of the form's first text field of that name (a file part is no value), else undefined. */
export function formField(form: MultipartForm, name: string): string | undefined {
  for (const part of form.parts) if (part.name === name && typeof part.value === 'string') return part.value;
  return undefined;
}

/** The form's first text field of that name as a non-negative integer written in decimal digits, else undefined. */
export function formInteger(form: MultipartForm, name: string): number | undefined {
  const value = formField(form, name);
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
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

export interface EncodedMultipart {
  readonly body: Buffer;
  readonly contentType: string;
}

/** The client's body with `model` as the value of every `model` field; everything else is the client's bytes. */
export function encodeMultipart(form: MultipartForm, model: string): EncodedMultipart {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const [start, end] of form.modelSpans) {
    chunks.push(form.body.subarray(at, start), Buffer.from(model, 'utf8'));
    at = end;
  }
  chunks.push(form.body.subarray(at));
  return { body: Buffer.concat(chunks), contentType: form.contentType };
}
