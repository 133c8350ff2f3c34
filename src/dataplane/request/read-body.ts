// Reads a request body into one Buffer, refusing more than `limit` bytes (413). Buffering is deliberate: the
// body is parsed once to find the model and must be replayable when a request fails over to another backend.
import type { Request } from 'express';
import type { BodyReservation } from './body-budget.js';
import { errors } from '../../model/errors.js';

/** Seconds a client refused for the body budget is asked to wait: long enough for an upload or two to finish. */
const BUDGET_RETRY_AFTER_SECONDS = 2;

/**
 * With a reservation, every chunk is counted against the process-wide body budget as it arrives; a body that does
 * not fit is refused with 503 and what it had reserved is given back at once.
 */
export function readBody(req: Request, limit: number, reservation?: BodyReservation): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    // Refuse before reading; the answer closes the connection once the rest has been drained (app.ts).
    req.resume();
    return Promise.reject(errors.tooLarge(limit));
  }
  if (reservation && declared !== undefined && Number.isFinite(Number(declared)) && !reservation.fits(Number(declared))) {
    req.resume();
    return Promise.reject(errors.bodyBudgetFull(BUDGET_RETRY_AFTER_SECONDS));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reservation?.release();
        req.resume();
        reject(errors.tooLarge(limit));
        return;
      }
      if (reservation && !reservation.tryReserve(chunk.length)) {
        cleanup();
        reservation.release();
        req.resume();
        reject(errors.bodyBudgetFull(BUDGET_RETRY_AFTER_SECONDS));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // On failure the chunks are dropped here, so their bytes go back to the budget now rather than at 'close'.
    const onError = (err: Error) => {
      cleanup();
      reservation?.release();
      reject(err);
    };
    // A client that hangs up mid-upload may produce neither 'end' nor 'error'; without this the request would hang.
    const onClose = () => {
      cleanup();
      reservation?.release();
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
