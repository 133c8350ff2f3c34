// What the API translations share (Responses → chat, chat → Messages): what a step of a request translation gives,
// its value or the 400 the client gets in OpenAI's error shape, and the guard for a JSON object. Here, in model/,
// so that one translation can compose the other without the features' folders importing each other in a circle.
import { GatewayError } from './errors.js';

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: GatewayError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** A refusal of the request: 400 invalid_request_error, naming the member (`param`) it is about. */
export function invalid(param: string | null, message: string, code = 'invalid_request'): { ok: false; error: GatewayError } {
  return { ok: false, error: new GatewayError(400, message, { code, param }) };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
