// Per-request context shared by the middleware, the handlers and the access log. Kept in res.locals under
// one key so nothing is attached to node's request objects.
import type { Request, Response } from 'express';
import type { CompiledRoute, CompiledToken, RoutingTable } from '../../model/routing-table.js';
import type { Family } from '../../model/families.js';

export interface RequestContext {
  readonly id: string;
  /** process.hrtime.bigint() at arrival. */
  readonly start: bigint;
  /** The table this request reads from start to end (one snapshot, even if a reload swaps it meanwhile). */
  table?: RoutingTable;
  token?: CompiledToken;
  family?: Family;
  route?: CompiledRoute;
  /** Name of the backend that answered (or was tried last). */
  backend?: string;
  attempts: number;
  /** True when the client went away before the response finished. */
  aborted?: boolean;
}

const KEY = 'gateway';

export function setContext(res: Response, ctx: RequestContext): void {
  res.locals[KEY] = ctx;
}

export function getContext(res: Response): RequestContext {
  return res.locals[KEY] as RequestContext;
}

/**
 * True when nobody can receive this request's answer any more: the client left, or the connection was already
 * answered and ended at the protocol level (e.g. a 408 when the upload outlived the request timeout, after
 * which a late body may still arrive). Checked after reading a body, before anything is sent upstream.
 */
export function clientGone(req: Request, res: Response): boolean {
  return res.destroyed || req.socket.destroyed || !req.socket.writable;
}
