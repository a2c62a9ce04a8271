/** Wire-protocol constants shared by the gateway, its clients and the schemas. */

/** Current protocol version; 3 is still accepted (N-1 window). */
export const PROTOCOL_VERSION = 4;
export const MIN_PROTOCOL_VERSION = 3;

export const ROLES = ['operator', 'node'] as const;
export type Role = (typeof ROLES)[number];

export const OPERATOR_SCOPES = [
  'operator.read',
  'operator.write',
  'operator.admin',
  'operator.approvals',
  'operator.pairing',
] as const;
export type OperatorScope = (typeof OPERATOR_SCOPES)[number];

/**
 * Error codes carried in `error.code` of a failed response. Finer reasons go in
 * `error.details.code` (for example AUTH_TOKEN_MISMATCH, MISSING_SCOPE, PAIRING_REQUIRED).
 */
export const ErrorCodes = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNAVAILABLE: 'UNAVAILABLE',
  NOT_PAIRED: 'NOT_PAIRED',
  NOT_LINKED: 'NOT_LINKED',
  AGENT_TIMEOUT: 'AGENT_TIMEOUT',
  FORBIDDEN: 'FORBIDDEN',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Frame limits advertised in hello-ok.policy, and the stricter limit before connect. */
export const MAX_PAYLOAD_BYTES = 25 * 1024 * 1024;
export const MAX_BUFFERED_BYTES = 50 * 1024 * 1024;
export const MAX_PREAUTH_PAYLOAD_BYTES = 64 * 1024;
export const TICK_INTERVAL_MS = 30_000;
