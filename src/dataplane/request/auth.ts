// Authentication: Authorization: Bearer <key>, or x-api-key: <key> (how Anthropic's SDKs and Claude Code send
// ANTHROPIC_API_KEY) → sha256 → token (one hash and one map read). Both are accepted on every route: a client
// speaks one API, but which header its SDK uses says nothing the gateway must tell apart. The key itself is
// never stored, logged or forwarded; only its digest is looked up.
import { sha256Hex } from '../../model/digest.js';
import type { NextFunction, Request, Response } from 'express';
import type { CompiledToken, RoutingTable, TableHolder } from '../../model/routing-table.js';
import { exchangeOf } from '../exchange/exchange.js';
import { errors, GatewayError } from '../../model/errors.js';

/**
 * Pure: the token the request's key authenticates, or the error to answer with. The key is Authorization's bearer
 * token when that header is present (a malformed one is refused, not passed over), else x-api-key's value.
 */
export function authenticate(
  table: RoutingTable,
  authorization: string | undefined,
  now: number,
  apiKey?: string | string[] | undefined,
): CompiledToken | GatewayError {
  const key = authorization ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1] : typeof apiKey === 'string' ? apiKey.trim() : undefined;
  if (!key) return errors.invalidApiKey();
  const digest = sha256Hex(key);
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
    const result = authenticate(table, req.headers.authorization, Date.now(), req.headers['x-api-key']);
    if (result instanceof GatewayError) return next(result);
    const ctx = exchangeOf(res);
    ctx.table = table;
    ctx.token = result;
    next();
  };
}
