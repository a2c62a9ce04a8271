/**
 * The error a gateway method throws to answer with a specific error shape (the gateway turns
 * it into the response's `error`). Parsing and checking frames is the gateway's own.
 */
import type { ErrorCode } from './constants.js';

/** An error a method handler can throw to send a specific error shape to the client. */
export class ProtocolError extends Error {
  constructor(
    readonly code: ErrorCode | string,
    message: string,
    readonly details?: unknown,
    readonly retryable?: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}
