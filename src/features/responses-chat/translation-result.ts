// What a step of the request translation gives: its value, or the 400 the client gets in OpenAI's error shape.
import { GatewayError } from '../../model/errors.js';

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: GatewayError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** A refusal of the request: 400 invalid_request_error, naming the member (`param`) it is about. */
export function invalid(param: string | null, message: string, code = 'invalid_request'): { ok: false; error: GatewayError } {
  return { ok: false, error: new GatewayError(400, message, { code, param }) };
}
