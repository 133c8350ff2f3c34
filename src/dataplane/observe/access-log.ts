// One log line and one set of request metrics per request, written when the exchange ends (the response finished
// or was cut). Only bounded, non-secret fields: never headers, bodies or the raw query string. A routed request's
// line is also its usage record (docs/usage-and-limits.md): the GatewayToken by namespace/name (never the key)
// and what the request consumed (written once the exchange has settled its usage, which it is given).
import type { NextFunction, Request, Response } from 'express';
import { currencyDigits, formatMoney } from '../../model/money.js';
import { infoLineWriter, type Logger } from '../../observability/logger.js';
import { NONE, statusClass, UNKNOWN, type Metrics } from '../../observability/metrics.js';
import { exchangeOf } from '../exchange/exchange.js';

const PROBES = new Set(['/healthz', '/readyz']);

export function accessLog(logger: Logger, metrics: Metrics) {
  // The currency is one per gateway: its minor unit's digits are looked up once, not per line.
  let currency = '';
  let digits = 2;
  // The access line is built here from plain scalars only (no headers, bodies or objects), so the logger's
  // path redaction could never find anything in it: it is written without it, in one serialization.
  const accessLine = infoLineWriter(logger, 'request');
  return (req: Request, res: Response, next: NextFunction): void => {
    const ctx = exchangeOf(res);
    ctx.onSettled((u) => {
      const seconds = (performance.now() - ctx.start) / 1e3;
      const path = req.path;
      // A client that left before any status was sent is logged as 499 (nginx's convention).
      const status = ctx.aborted && !res.headersSent ? 499 : res.statusCode;
      if (PROBES.has(path)) {
        logger.debug({ reqId: ctx.id, method: req.method, path, status }, 'probe');
        return;
      }
      const family = ctx.family ?? (path.startsWith('/v1/models') ? 'models' : 'other');
      const model = ctx.route?.model ?? UNKNOWN;
      const group = ctx.token?.group.name ?? NONE;
      const labels = [family, model, group, statusClass(status)] as const;
      metrics.requests.inc(labels);
      metrics.requestDuration.observe(labels, seconds, ctx.trace?.exemplarId);
      // The usage record's counts, flat (a warehouse loads columns); absent when the request was not routed. Named
      // here rather than spread from a second object: one object per line. An unknown cost is never written as a
      // figure (what could be priced is only a lower bound): `costKnown: false` instead.
      const cost = u?.cost;
      const known = cost?.known === true;
      const background = u?.background;
      if (known && cost.currency !== currency) [currency, digits] = [cost.currency, currencyDigits(cost.currency)];
      accessLine({
        reqId: ctx.id,
        method: req.method,
        path: path.length > 256 ? path.slice(0, 256) : path,
        status,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        family,
        model,
        group,
        backend: ctx.backend,
        attempts: ctx.attempts || undefined,
        upstreamError: ctx.upstreamError,
        aborted: ctx.aborted || undefined,
        tokenRef: ctx.token?.ref,
        inputTokens: u?.inputTokens,
        outputTokens: u?.outputTokens,
        cachedInputTokens: u?.cachedInputTokens,
        cacheWriteInputTokens: u?.cacheWriteInputTokens,
        cacheWrite1hInputTokens: u?.cacheWrite1hInputTokens,
        reasoningTokens: u?.reasoningTokens,
        imageInputTokens: u?.imageInputTokens,
        imageOutputTokens: u?.imageOutputTokens,
        audioInputTokens: u?.audioInputTokens,
        audioOutputTokens: u?.audioOutputTokens,
        seconds: u?.seconds,
        characters: u?.characters,
        images: u?.images?.count,
        imageSize: u?.images?.size,
        imageQuality: u?.images?.quality,
        webSearchCalls: u?.serverToolCalls?.webSearch,
        webFetchCalls: u?.serverToolCalls?.webFetch,
        fileSearchCalls: u?.serverToolCalls?.fileSearch,
        serverToolCallsUncounted: u?.serverToolCalls?.uncounted,
        estimated: u?.estimated,
        // A credit (a failed video's) is negative.
        cost: known ? (cost.micros < 0 ? `-${formatMoney(-cost.micros, digits)}` : formatMoney(cost.micros, digits)) : undefined,
        currency: known ? cost.currency : undefined,
        costKnown: cost && !known ? false : undefined,
        costEstimated: known && u?.estimated ? true : undefined,
        // What a background response generated beyond its create's record, recorded on the call that saw it finish.
        background: background ? true : undefined,
        responseId: background?.responseId,
        createReqId: background?.createReqId ?? u?.credit?.createReqId,
        // The credit of a video that failed, recorded on the retrieve that saw it failed.
        credit: u?.credit ? true : undefined,
        videoId: u?.credit?.videoId,
        traceId: ctx.trace?.traceId,
      });
    });
    next();
  };
}

/**
 * The access line and request count of a request the server answered before any handler saw it (a malformed
 * request, headers too large or too slow): its request id and status only, since its method and path may be garbage.
 */
export function protocolAnswerLog(logger: Logger, metrics: Metrics) {
  return ({ status, requestId }: { status: number; requestId: string }): void => {
    metrics.requests.inc(['other', UNKNOWN, NONE, statusClass(status)]);
    logger.info({ reqId: requestId, status, family: 'other', model: UNKNOWN, group: NONE }, 'request');
  };
}
