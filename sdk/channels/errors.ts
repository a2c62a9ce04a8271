import type { ChannelSendFailure } from '../types/channels.js';

/** Throw from `send` to tell the kernel whether (and when) to try again. */
export class ChannelSendError extends Error implements ChannelSendFailure {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  constructor(message: string, options: { retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ChannelSendError';
    this.retryable = options.retryable ?? options.retryAfterMs !== undefined;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}
