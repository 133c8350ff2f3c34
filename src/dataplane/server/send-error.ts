// Writes a GatewayError to an express response: its headers, its status and its JSON body, in the shape of the API
// the client speaks: Anthropic's for the Messages API (its paths, or any request that carries anthropic-version, as
// Anthropic's SDKs and Claude Code send on every call), OpenAI's otherwise (model/errors.ts and
// model/anthropic-errors.ts keep the shapes, with no I/O). A response whose head already went out can only be cut.
import type { Request, Response } from 'express';
import { anthropicError, errorTypeForStatus } from '../../model/anthropic-errors.js';
import type { GatewayError } from '../../model/errors.js';
import type { Family } from '../../model/families.js';
import { exchangeOf } from '../exchange/exchange.js';

type ErrorShape = 'openai' | 'anthropic';

/** Pure: the error shape a request's client reads. */
export function errorShapeOf(path: string, family: Family | undefined, anthropicVersion: unknown): ErrorShape {
  if (family === 'messages' || path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return anthropicVersion === undefined ? 'openai' : 'anthropic';
}

/** Writes an error response unless the response has already started (then the connection is cut instead). */
export function sendError(req: Request, res: Response, err: GatewayError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  const x = exchangeOf(res);
  if (errorShapeOf(req.path, x?.family, req.headers['anthropic-version']) === 'openai') {
    res.status(err.status).json(err.toBody());
    return;
  }
  // Anthropic's SDKs read their request id from request-id (x-request-id is there too, as on every answer).
  if (x) res.setHeader('request-id', x.id);
  res.status(err.status).json(anthropicError(errorTypeForStatus(err.status), err.message));
}
