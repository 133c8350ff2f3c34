// Where a gateway keeps the items its translated answers gave (kept-items.ts): in Redis when one is configured for
// them (shared by every replica), else in this process. Redis's failures are counted, and logged at most every ten
// seconds with how many were not.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../observability/logger.js';
import { sharedMetric } from '../../observability/shared-metric.js';
import { throttled } from '../../observability/throttled.js';
import { type KeptItems, MemoryKeptItems } from './kept-items.js';
import { RedisKeptItems } from './redis-kept-items.js';

const LOG_EVERY_MS = 10_000;

export function keptItemsStore(redisUrl: string | undefined, logger: Logger, registry: Registry): KeptItems {
  if (redisUrl === undefined) return new MemoryKeptItems();
  const errors = sharedMetric(registry, Counter, {
    name: 'model_gateway_kept_items_errors_total',
    help: 'Calls to the Redis of kept items (--items-redis-url) that failed: items not kept, or a request with an item_reference answered 503.',
  });
  const warn = throttled(LOG_EVERY_MS);
  return new RedisKeptItems({
    url: redisUrl,
    onError: (err) => {
      errors.inc();
      warn((suppressed) =>
        logger.warn(
          { error: err.message, suppressed },
          'the Redis of kept items failed: items are not kept, and references to them answer 503, until it answers',
        ),
      );
    },
  });
}
