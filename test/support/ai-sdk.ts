// For tests that call the gateway through the Vercel AI SDK.
import { APICallError, streamText } from 'ai';
import { expect } from 'vitest';

/** The APICallError a call fails with (call it with the SDK's retries off, so the first answer is the one seen). */
export async function callFailure(call: Promise<unknown>): Promise<APICallError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(APICallError.isInstance(err), String(err)).toBe(true);
  return err as APICallError;
}

/**
 * A streamText run read to the end of its text: the text, the errors the SDK reported (a stream's errors reach
 * onError, not the reader), and the run, for its steps and usage.
 */
export async function streamedText(
  options: Parameters<typeof streamText>[0],
): Promise<{ text: string; errors: unknown[]; result: ReturnType<typeof streamText> }> {
  const errors: unknown[] = [];
  const result = streamText({ ...options, onError: ({ error }) => void errors.push(error) });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return { text, errors, result };
}
