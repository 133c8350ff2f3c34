// Writes a GatewayError to an express response: its headers, its status and its JSON body (model/errors.ts keeps the
// shapes and codes, with no I/O). A response whose head already went out can only be cut.
import type { Response } from 'express';
import type { GatewayError } from '../../model/errors.js';

/** Writes an error response unless the response has already started (then the connection is cut instead). */
export function sendError(res: Response, err: GatewayError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).json(err.toBody());
}
