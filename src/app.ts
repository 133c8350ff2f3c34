// createApp(deps) builds the express app for the API port without listening; main.ts and the tests listen.
import express, { type Express } from 'express';
import type { TableHolder } from './config/table.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';

export interface AppLimits {
  /** Largest JSON body accepted (bytes). */
  readonly jsonBytes: number;
  /** Largest multipart body accepted (bytes): audio and image uploads. */
  readonly multipartBytes: number;
}

export const DEFAULT_LIMITS: AppLimits = { jsonBytes: 20 * 1024 * 1024, multipartBytes: 100 * 1024 * 1024 };

export interface AppDeps {
  readonly tables: TableHolder;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** True once the first complete config snapshot is compiled and while not draining. */
  readonly isReady: () => boolean;
  readonly limits?: AppLimits;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const ready = deps.isReady();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  return app;
}
