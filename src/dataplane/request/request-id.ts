// x-request-id on every response: a sane incoming id is honoured (so traces join up across hops), anything
// else gets a fresh one. "Sane" is short and made of characters that cannot smuggle anything into logs. The
// gateway's own answers to an Anthropic client carry it as request-id too, where Anthropic's SDKs read it.
import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { attachExchange, Exchange, exchangeOf } from '../exchange/exchange.js';
import { clientApiOf } from './client-api.js';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const HEADER = 'x-request-id';
const ANTHROPIC_HEADER = 'request-id';

export function chooseRequestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
}

/** Gives the request its id and its exchange; the id goes out with the response's head (idOnEveryHead). */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  attachExchange(res, new Exchange(chooseRequestId(req.headers[HEADER]), res));
  next();
}

/** The id of a request the app is handling (undefined before its exchange exists), for answers written past the app. */
export function requestIdOf(res: ServerResponse): string | undefined {
  const locals = (res as Response).locals as Response['locals'] | undefined;
  return locals ? exchangeOf(res as Response)?.id : undefined;
}

type Head = OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined;

/**
 * Makes every response of an app (whose response prototype this is) carry its exchange's id, added as its head
 * is written: every way of answering (express's send, a relayed answer, an error, an event stream's early
 * head) ends in writeHead. Not set on arrival: a header set before writeHead makes node merge the head's own
 * headers into it one setHeader at a time (an array per header, a dictionary), garbage on every proxied
 * request. A head given as an object that names the id already (the relayed answer's) goes as it is.
 */
export function idOnEveryHead(proto: Response): void {
  const writeHead = proto.writeHead as (this: ServerResponse, status: number, reason?: string | Head, headers?: Head) => ServerResponse;
  proto.writeHead = function (this: Response, status: number, reason?: string | Head, headers?: Head) {
    const x = this.locals ? exchangeOf(this) : undefined;
    if (x && !this.hasHeader(HEADER)) {
      const given = typeof reason === 'object' ? reason : headers;
      if (!given || Array.isArray(given) || given[HEADER] === undefined) {
        this.setHeader(HEADER, x.id);
        const req = this.req;
        if (!this.hasHeader(ANTHROPIC_HEADER) && clientApiOf(req.path, x.family, req.headers['anthropic-version']) === 'anthropic')
          this.setHeader(ANTHROPIC_HEADER, x.id);
      }
    }
    return writeHead.call(this, status, reason, headers);
  } as Response['writeHead'];
}
