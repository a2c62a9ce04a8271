/**
 * Frames on the wire: parsing and checking them, and the error shape a failed request
 * answers with. The schemas are precompiled at build time (`npm run gen`) into
 * sdk/generated/validators, so neither the gateway nor a client ever loads ajv for them.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import type { Validation } from '../../kernel/protocol/registry.js';
import { formatErrors } from '../../kernel/validation.js';
import { ErrorCodes, type ErrorCode } from './constants.js';
import type { ConnectParams, ErrorShape, EventFrame, Frame, RequestFrame, ResponseFrame } from './schema.js';

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

  toShape(): ErrorShape {
    return {
      code: this.code,
      message: this.message,
      ...(this.details !== undefined ? { details: this.details } : {}),
      ...(this.retryable !== undefined ? { retryable: this.retryable } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
    };
  }
}

export function errorShape(code: ErrorCode | string, message: string, details?: unknown): ErrorShape {
  return new ProtocolError(code, message, details).toShape();
}

const require = createRequire(import.meta.url);

/** A check against the precompiled validator `name`, loaded on first use. */
function checker<T>(name: string): (value: unknown) => Validation<T> {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= require(`../generated/validators/${name}.cjs`) as ValidateFunction;
    if (validate(value)) return { ok: true, value: value as T };
    return { ok: false, issues: formatErrors(validate.errors ?? [], value) };
  };
}

export const validateRequestFrame = checker<RequestFrame>('request-frame');
export const validateResponseFrame = checker<ResponseFrame>('response-frame');
export const validateEventFrame = checker<EventFrame>('event-frame');
export const validateConnectParams = checker<ConnectParams>('connect-params');

const FRAME_CHECKS = new Map<unknown, (value: unknown) => Validation<Frame>>([
  ['req', validateRequestFrame],
  ['res', validateResponseFrame],
  ['event', validateEventFrame],
]);

type Parsed = { ok: true; frame: Frame } | { ok: false; error: ErrorShape };

/** Parse one text frame; every failure is an INVALID_REQUEST error naming what was wrong. */
export function parseFrame(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = `frame is not valid JSON: ${(error as Error).message}`;
    return { ok: false, error: errorShape(ErrorCodes.INVALID_REQUEST, reason) };
  }
  const type = value !== null && typeof value === 'object' ? (value as { type?: unknown }).type : undefined;
  const validate = FRAME_CHECKS.get(type);
  if (!validate) {
    return { ok: false, error: errorShape(ErrorCodes.INVALID_REQUEST, 'frame "type" must be "req", "res" or "event"') };
  }
  const result = validate(value);
  if (!result.ok) {
    const summary = result.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    const message = `invalid ${String(type)} frame: ${summary}`;
    return { ok: false, error: errorShape(ErrorCodes.INVALID_REQUEST, message, { issues: result.issues }) };
  }
  return { ok: true, frame: result.value };
}
