// How large a request body the gateway accepts, per kind of body (the --max-json-body and --max-upload-body flags).

export interface BodyLimits {
  /** Largest JSON body accepted (bytes). */
  readonly jsonBytes: number;
  /** Largest multipart body accepted (bytes): audio and image uploads. */
  readonly multipartBytes: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { jsonBytes: 20 * 1024 * 1024, multipartBytes: 100 * 1024 * 1024 };
