// Writes a GatewayError to an express response: its headers, its status and its JSON body, in the shape of the API
// the client speaks (request/client-api.ts; model/errors.ts and model/anthropic-errors.ts keep the shapes, with no
// I/O). A response whose head already went out can only be cut.
import type { Request, Response } from 'express';
import { anthropicError, errorTypeForStatus } from '../../model/anthropic-errors.js';
import type { GatewayError } from '../../model/errors.js';
import { exchangeOf } from '../exchange/exchange.js';
import { clientApiOf } from '../request/client-api.js';

/** Writes an error response unless the response has already started (then the connection is cut instead). */
export function sendError(req: Request, res: Response, err: GatewayError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  const x = exchangeOf(res);
  if (clientApiOf(req.path, x?.family, req.headers['anthropic-version']) === 'openai') {
    res.status(err.status).json(err.toBody());
    return;
  }
  res.status(err.status).json(anthropicError(errorTypeForStatus(err.status), err.message));
}
