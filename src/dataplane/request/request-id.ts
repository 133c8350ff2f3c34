// x-request-id on every response: a sane incoming id is honoured (so traces join up across hops), anything
// else gets a fresh one. "Sane" is short and made of characters that cannot smuggle anything into logs.
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { attachExchange, Exchange } from '../exchange/exchange.js';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function chooseRequestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = chooseRequestId(req.headers['x-request-id']);
  res.setHeader('x-request-id', id);
  attachExchange(res, new Exchange(id, res));
  next();
}
