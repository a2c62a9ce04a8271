/**
 * Frames arriving at the gateway: parsing and checking them, and the error shape a failed
 * request answers with. The schemas (schemas/protocol.ts) are precompiled at build time
 * (`npm run gen`) into generated/validators, so the gateway never loads ajv for them.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import {
  ErrorCodes,
  formatErrors,
  type ConnectParams,
  type ErrorCode,
  type ErrorShape,
  type EventFrame,
  type Frame,
  type ProtocolError,
  type RequestFrame,
  type ResponseFrame,
  type Validation,
} from '../../sdk/index.js';

/** The most a connection may send before its connect is accepted. */
export const MAX_PREAUTH_PAYLOAD_BYTES = 64 * 1024;

/** What a ProtocolError a method threw tells the client. */
export function protocolErrorShape(error: ProtocolError): ErrorShape {
  return {
    code: error.code,
    message: error.message,
    ...(error.details !== undefined ? { details: error.details } : {}),
    ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
}

export function errorShape(code: ErrorCode | string, message: string, details?: unknown): ErrorShape {
  return { code, message, ...(details !== undefined ? { details } : {}) };
}

const require = createRequire(import.meta.url);

/** A check against the precompiled validator `name`, loaded on first use. */
function checker<T>(name: string): (value: unknown) => Validation<T> {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= require(`./generated/validators/${name}.cjs`) as ValidateFunction;
    if (validate(value)) return { ok: true, value: value as T };
    return { ok: false, issues: formatErrors(validate.errors ?? [], value) };
  };
}

export const validateConnectParams = checker<ConnectParams>('connect-params');

const FRAME_CHECKS = new Map<unknown, (value: unknown) => Validation<Frame>>([
  ['req', checker<RequestFrame>('request-frame')],
  ['res', checker<ResponseFrame>('response-frame')],
  ['event', checker<EventFrame>('event-frame')],
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
