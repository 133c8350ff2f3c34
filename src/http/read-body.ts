// Reads a request body into one Buffer, refusing more than `limit` bytes (413). Buffering is deliberate: the
// body is parsed once to find the model and must be replayable when a request fails over to another backend.
import type { Request } from 'express';
import { errors } from './errors.js';

export function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    // Refuse before reading; the connection is closed after the answer so the unread body is not parsed as a request.
    req.resume();
    return Promise.reject(errors.tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(errors.tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    // A client that hangs up mid-upload may produce neither 'end' nor 'error'; without this the request would hang.
    const onClose = () => {
      cleanup();
      reject(new Error('client closed the connection during the upload'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
