/**
 * The error a gateway method throws to answer with a specific error shape (the gateway turns
 * it into the response's `error`). Parsing and checking frames is the gateway's own.
 */
import type { ErrorCode } from './constants.js';
import type { EventFrame, RequestFrame, ResponseFrame } from '../generated/protocol.js';

export type Frame = RequestFrame | ResponseFrame | EventFrame;

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
