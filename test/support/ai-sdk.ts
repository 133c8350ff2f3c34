// For tests that call the gateway through the Vercel AI SDK.
import { APICallError } from 'ai';
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
