/** Wire-protocol constants shared by the gateway, its clients and the schemas. */

/** Current protocol version; 3 is still accepted (N-1 window). */
export const PROTOCOL_VERSION = 4;
export const MIN_PROTOCOL_VERSION = 3;

export const OPERATOR_SCOPES = [
  'operator.read',
  'operator.write',
  'operator.admin',
  'operator.approvals',
  'operator.pairing',
] as const;

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

/** The client id claw's CLI connects with: OpenClaw's gateways accept only ids from a fixed list, "cli" among them. */
export const CLI_CLIENT_ID = 'cli';
