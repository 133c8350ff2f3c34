// Deterministic non-text payloads for the demo backend: embedding vectors derived from a hash of the input,
// a tiny PNG, and a short WAV of silence. Pure and fast (benchmarks run through the demo backend).
import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/** A unit-length vector of `dimensions` floats, a pure function of model and input. */
export function embeddingVector(model: string, input: string, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  let block = Buffer.alloc(0);
  let counter = 0;
  for (let i = 0; i < dimensions; i++) {
    const offset = (i % 8) * 4;
    if (offset === 0) block = createHash('sha256').update(`${model}\0${input}\0${counter++}`).digest();
    out[i] = block.readUInt32LE(offset) / 0xffffffff - 0.5;
  }
  let norm = 0;
  for (const v of out) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dimensions; i++) out[i] = out[i]! / norm;
  return out;
}

/** The little-endian float32 bytes as base64, which is what `encoding_format: "base64"` returns (the SDKs' default). */
export function vectorBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8×8 PNG in one colour taken from a hash of `seed` (so different prompts give different images). */
export function demoPng(seed: string): Buffer {
  const [r, g, b] = createHash('sha256').update(seed).digest();
  const size = 8;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const row = Buffer.alloc(1 + size * 3); // filter byte 0, then pixels
  for (let x = 0; x < size; x++) row.set([r!, g!, b!], 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A valid mono 16-bit PCM WAV of silence, about 30 ms per input character (0.2 s to 3 s) at 8 kHz. */
export function silenceWav(text: string, sampleRate = 8000): Buffer {
  const seconds = Math.min(3, Math.max(0.2, text.length * 0.03));
  const samples = Math.round(seconds * sampleRate);
  const dataBytes = samples * 2;
  const wav = Buffer.alloc(44 + dataBytes);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'latin1');
  wav.write('fmt ', 12, 'latin1');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(dataBytes, 40);
  return wav;
}

/** Placeholder video bytes: an MP4 `ftyp` box followed by a deterministic filler. Not a playable video. */
export function demoVideoBytes(seed: string): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4, 'latin1');
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write('isommp41', 16, 'latin1');
  const filler = createHash('sha256').update(seed).digest();
  return Buffer.concat([ftyp, ...Array.from({ length: 32 }, () => filler)]);
}
