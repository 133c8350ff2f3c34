// Where a gateway keeps the responses its translations answered (kept-responses.ts): in Redis when one is configured
// for them (shared by every replica), else in this process. Redis's failures are counted, and logged at most every
// ten seconds with how many were not. And the retrieve, delete and input items of kept responses, for the follow-up
// routes.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../observability/logger.js';
import { sharedMetric } from '../../observability/shared-metric.js';
import { throttled } from '../../observability/throttled.js';
import type { LocalResponses } from '../sealed-ids/sealed-routes.js';
import { type KeptResponses, MemoryKeptResponses } from './kept-responses.js';
import { RedisKeptResponses } from './redis-kept-responses.js';
import { inputItemsPage } from './input-items-page.js';
import { isMintedResponseId } from './response-parts.js';

const LOG_EVERY_MS = 10_000;

export function keptResponsesStore(redisUrl: string | undefined, logger: Logger, registry: Registry): KeptResponses {
  if (redisUrl === undefined) return new MemoryKeptResponses();
  const errors = sharedMetric(registry, Counter, {
    name: 'model_gateway_kept_responses_errors_total',
    help: 'Calls to the Redis of kept responses (--responses-redis-url) that failed: a response not kept, or a request continuing one or referring to its items answered 503.',
  });
  const warn = throttled(LOG_EVERY_MS);
  return new RedisKeptResponses({
    url: redisUrl,
    onError: (err) => {
      errors.inc();
      warn((suppressed) =>
        logger.warn(
          { error: err.message, suppressed },
          'the Redis of kept responses failed: responses are not kept, and requests continuing one or referring to its items answer 503, until it answers',
        ),
      );
    },
  });
}

/** Retrieve, delete and the input items of kept responses, for the follow-up routes (sealed-ids' LocalResponses). */
export function keptFollowUps(kept: KeptResponses): LocalResponses {
  // Only an id of the minted shape is looked up: any other (a forged one, a sealed one refused) is not found at once.
  const find = async (owner: string, id: string) => (isMintedResponseId(id) ? (await kept.find(owner, [id])).get(id) : undefined);
  return {
    retrieve: async (owner, id) => (await find(owner, id))?.response,
    delete: async (owner, id) => isMintedResponseId(id) && (await kept.delete(owner, id)),
    inputItems: async (owner, id, query) => {
      const response = await find(owner, id);
      return response && inputItemsPage(id, response.input, query);
    },
  };
}
