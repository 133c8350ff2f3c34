// Time to first token, as an exchange transform every exchange gets: the first chunk of a successful event
// stream the client receives feeds `gen_ai_server_time_to_first_token_seconds`. Observes only. A whole answer
// told as the family's events reaches the client as a stream too: it is wired after the features, so the first
// chunk it sees is the events at the moment they go out (the telling handler passes nothing on before).
import type { Metrics } from '../../observability/metrics.js';
import { type AnswerHandler, type ExchangeTransform, toldAsEvents } from '../exchange/transform.js';
import { FirstChunk } from '../stream/sse.js';

export function firstTokenTimer(metrics: Metrics): ExchangeTransform {
  return {
    onResponseStart(a): AnswerHandler | undefined {
      if (a.statusCode >= 300 || !toldAsEvents(a)) return undefined;
      const x = a.exchange;
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
