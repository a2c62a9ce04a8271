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

/** Error codes carried in `error.code` of a failed response. */
export const ErrorCodes = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNAVAILABLE: 'UNAVAILABLE',
  NOT_PAIRED: 'NOT_PAIRED',
  NOT_LINKED: 'NOT_LINKED',
  AGENT_TIMEOUT: 'AGENT_TIMEOUT',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_FOUND: 'METHOD_NOT_FOUND',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  PROTOCOL_MISMATCH: 'PROTOCOL_MISMATCH',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];
