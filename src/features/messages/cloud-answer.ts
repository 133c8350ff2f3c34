// The body and answer of Claude on a cloud's own endpoint (backends/: Vertex AI's rawPredict, Bedrock's
// InvokeModel): the adapter's request as the OutgoingBody the data plane sends (its path, header edits and, for
// Bedrock's stream, the framing of the answer), and the reader of a Bedrock stream: decoded into Anthropic's SSE
// first, so the usage reader here and every handler after it (usage, tracing) read SSE.
import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerHandler, OutgoingBody } from '../../dataplane/exchange/transform.js';
import type { Usage } from '../../model/usage.js';
import type { Translated } from '../../model/anthropic-errors.js';
import { AWS_EVENT_STREAM } from './backends/bedrock-claude.js';
import { bedrockSseHandler } from './backends/bedrock-sse.js';
import { type ClaudeCloud, claudeCloudRequest } from './backends/claude-cloud.js';
import { NativeStreamReader } from './native-answer.js';

export interface CloudCall {
  readonly create: boolean;
  readonly body: Buffer;
  readonly model: string;
  readonly stream: boolean;
  readonly headers: IncomingHttpHeaders;
  /** The anthropic-beta flags the backend receives; undefined: all the client sent. */
  readonly betas: ReadonlySet<string> | undefined;
}

/** The request as the cloud takes it, or the adapter's refusal. */
export function cloudBody(cloud: ClaudeCloud, call: CloudCall): Translated<OutgoingBody> {
  const r = claudeCloudRequest(cloud, { ...call, operation: call.create ? 'messages' : 'count_tokens' });
  if (!r.ok) return r;
  const { path, body, contentType, dropHeaders, setHeaders, answer } = r.value;
  return {
    ok: true,
    value: {
      path,
      body,
      contentType,
      headers: { drop: dropHeaders, set: setHeaders },
      eventStream: answer === 'aws-event-stream' ? AWS_EVENT_STREAM : undefined,
    },
  };
}

/** True when the relayed answer is Bedrock's event stream (its upstream Content-Type), which must be decoded. */
export function isAwsEventStream(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return String(headers['content-type'] ?? '').startsWith(AWS_EVENT_STREAM);
}

/** Bedrock's stream decoded into Anthropic's SSE, its usage read from the decoded events. */
export function bedrockStreamReader(): AnswerHandler {
  const decode = bedrockSseHandler();
  const usage = new NativeStreamReader();
  return {
    edits: true,
    onData: (chunk) => usage.onData(decode.onData!(chunk)),
    flush: () => {
      const rest = decode.flush?.();
      return rest && rest.length > 0 ? usage.onData(rest) : rest;
    },
    onEnd: (): Usage | undefined => usage.onEnd(),
    partial: (): Usage | undefined => usage.partial(),
  };
}
