// Authentication: Authorization: Bearer <key> → sha256 → token (one hash and one map read). The key itself
// is never stored, logged or forwarded; only its digest is looked up.
import { sha256Hex } from '../../model/digest.js';
import type { NextFunction, Request, Response } from 'express';
import type { CompiledToken, RoutingTable, TableHolder } from '../../model/routing-table.js';
import { exchangeOf } from '../exchange/exchange.js';
import { errors, GatewayError } from '../../model/errors.js';

/** Pure: the token a header authenticates, or the error to answer with. */
export function authenticate(table: RoutingTable, authorization: string | undefined, now: number): CompiledToken | GatewayError {
  if (!authorization) return errors.invalidApiKey();
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  if (!match) return errors.invalidApiKey();
  const digest = sha256Hex(match[1]!);
  const token = table.tokensByDigest.get(digest);
  if (!token || token.disabled) return errors.invalidApiKey();
  if (token.expiresAtMs !== undefined && now >= token.expiresAtMs) return errors.invalidApiKey();
  return token;
}

/** Middleware: pins the current table for the request and authenticates against it. */
export function authMiddleware(tables: TableHolder) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const table = tables.get();
    if (!table) return next(errors.notReady());
    const result = authenticate(table, req.headers.authorization, Date.now());
    if (result instanceof GatewayError) return next(result);
    const ctx = exchangeOf(res);
    ctx.table = table;
    ctx.token = result;
    next();
  };
}
