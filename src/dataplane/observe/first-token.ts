// Time to first token, as an exchange transform every exchange gets: the first chunk of a successful event
// stream the client receives feeds `gen_ai_server_time_to_first_token_seconds`. Observes only.
import type { Metrics } from '../../observability/metrics.js';
import type { AnswerHandler, ExchangeTransform } from '../exchange/transform.js';
import { FirstChunk } from '../stream/sse.js';

export function firstTokenTimer(metrics: Metrics): ExchangeTransform {
  return {
    onResponseStart({ exchange: x, statusCode, isStream }): AnswerHandler | undefined {
      if (!isStream || statusCode >= 300) return undefined;
      const first = new FirstChunk();
      return {
        onData(chunk) {
          if (first.now()) {
            metrics.timeToFirstToken.observe([x.family, x.route.model], (performance.now() - x.start) / 1e3, x.trace?.exemplarId);
          }
          return chunk;
        },
      };
    },
  };
}
