/**
 * Gateway wire protocol, as TypeBox: frames, errors and the handshake. Build-time source of
 * sdk/generated/protocol.ts (the types) and the gateway's frame validators. Frames are JSON
 * text over WebSocket:
 *   request   {type:"req",   id, method, params?}
 *   response  {type:"res",   id, ok, payload? | error?}
 *   event     {type:"event", event, payload?, seq?, stateVersion?}
 */
import { Type } from 'typebox';

/** Who connects: an operator (CLI, Control UI) or a node. */
const ROLES = ['operator', 'node'] as const;

const Id = Type.String({ minLength: 1, maxLength: 128 });

export const ErrorShapeSchema = Type.Object(
  {
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
    details: Type.Optional(Type.Unknown()),
    retryable: Type.Optional(Type.Boolean()),
    retryAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const RequestFrameSchema = Type.Object(
  {
    type: Type.Literal('req'),
    id: Id,
    method: Type.String({ minLength: 1, maxLength: 128 }),
    params: Type.Optional(Type.Unknown()),
    traceparent: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
);

export const ResponseFrameSchema = Type.Object(
  {
    type: Type.Literal('res'),
    id: Id,
    ok: Type.Boolean(),
    payload: Type.Optional(Type.Unknown()),
    error: Type.Optional(ErrorShapeSchema),
  },
  { additionalProperties: false },
);

export const EventFrameSchema = Type.Object(
  {
    type: Type.Literal('event'),
    event: Type.String({ minLength: 1, maxLength: 128 }),
    payload: Type.Optional(Type.Unknown()),
    seq: Type.Optional(Type.Integer({ minimum: 0 })),
    stateVersion: Type.Optional(
      Type.Object(
        { presence: Type.Optional(Type.Integer({ minimum: 0 })), health: Type.Optional(Type.Integer({ minimum: 0 })) },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ConnectParamsSchema = Type.Object(
  {
    minProtocol: Type.Integer({ minimum: 1 }),
    maxProtocol: Type.Integer({ minimum: 1 }),
    client: Type.Object(
      {
        id: Type.String({ minLength: 1 }),
        version: Type.Optional(Type.String()),
        platform: Type.Optional(Type.String()),
        mode: Type.Optional(Type.String()),
        displayName: Type.Optional(Type.String()),
        instanceId: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
    role: Type.Optional(Type.Enum(ROLES)),
    scopes: Type.Optional(Type.Array(Type.String())),
    caps: Type.Optional(Type.Array(Type.String())),
    commands: Type.Optional(Type.Array(Type.String())),
    permissions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    auth: Type.Optional(
      Type.Object(
        {
          token: Type.Optional(Type.String()),
          password: Type.Optional(Type.String()),
          deviceToken: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
    ),
    locale: Type.Optional(Type.String()),
    userAgent: Type.Optional(Type.String()),
    device: Type.Optional(
      Type.Object(
        {
          id: Type.String({ minLength: 1 }),
          publicKey: Type.String({ minLength: 1 }),
          signature: Type.String({ minLength: 1 }),
          signedAt: Type.Integer({ minimum: 0 }),
          nonce: Type.String({ minLength: 1 }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

export const HelloOkSchema = Type.Object(
  {
    type: Type.Literal('hello-ok'),
    protocol: Type.Integer(),
    server: Type.Object({ version: Type.String(), connId: Type.String() }, { additionalProperties: true }),
    features: Type.Object(
      { methods: Type.Array(Type.String()), events: Type.Array(Type.String()) },
      { additionalProperties: true },
    ),
    snapshot: Type.Object({}, { additionalProperties: true }),
    auth: Type.Object(
      {
        role: Type.String(),
        scopes: Type.Array(Type.String()),
        deviceToken: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
    policy: Type.Object(
      {
        maxPayload: Type.Integer(),
        maxBufferedBytes: Type.Integer(),
        tickIntervalMs: Type.Integer(),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
