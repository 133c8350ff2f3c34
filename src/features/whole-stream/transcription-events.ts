// A whole transcription as the events of a transcription stream, for an upstream that answered a stream request
// whole (whisper-1 does not stream): its text in one `transcript.text.delta`, then `transcript.text.done` with the
// text, logprobs and usage; members a stream has no place for (a verbose answer's segments, words, duration) stay in
// the done event, so nothing of the answer is lost. Pure.

type Json = Record<string, unknown>;

/** The events of `answer`, or undefined when it is not a transcription (an object with a `text`). */
export function transcriptionEvents(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer) || typeof (answer as Json)['text'] !== 'string') return undefined;
  const whole = answer as Json;
  const delta = { type: 'transcript.text.delta', delta: whole['text'], ...(whole['logprobs'] !== undefined ? { logprobs: whole['logprobs'] } : {}) };
  const done = { type: 'transcript.text.done', ...whole };
  return `event: ${delta.type}\ndata: ${JSON.stringify(delta)}\n\nevent: ${done.type}\ndata: ${JSON.stringify(done)}\n\n`;
}
