/**
 * Device pairing: the devices waiting to be paired and those paired, approving and
 * rejecting them, and their tokens. Every change is made against the store as it is on
 * disk and answered once it is written; removing a device or revoking a token closes the
 * connections that used it.
 */
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { publicDevice, publicRequest, PairingError } from './pairing.js';
import type { GatewayRuntime } from './runtime.js';

const EMPTY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
const REQUEST_ID: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['requestId'],
  properties: { requestId: { type: 'string', minLength: 1 } },
};
const DEVICE_ROLE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deviceId'],
  properties: { deviceId: { type: 'string', minLength: 1 }, role: { enum: ['operator', 'node'] } },
};

export function registerDeviceMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;

  /** Run a pairing change against the store as it is on disk, and answer once it is written. */
  const pairingCall = async <T>(work: () => T): Promise<T> => {
    try {
      await runtime.pairing.reload();
      const result = work();
      await runtime.pairing.flush();
      return result;
    } catch (error) {
      if (error instanceof PairingError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
      throw error;
    }
  };

  api.registerGatewayMethod('device.pair.list', {
    params: EMPTY,
    scope: 'operator.pairing',
    description: 'Pending pairing requests and paired devices.',
    handler: () =>
      pairingCall(() => ({
        pending: runtime.pairing.listPending().map(publicRequest),
        paired: runtime.pairing
          .listPaired()
          .map((device) => publicDevice(device, runtime.isConnected(device.deviceId))),
      })),
  });

  api.registerGatewayMethod('device.pair.approve', {
    params: REQUEST_ID,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Approve a pending pairing request; the device may then connect.',
    handler: (params: { requestId: string }, ctx) =>
      pairingCall(() => {
        const device = runtime.pairing.approve(params.requestId, ctx.deviceId ?? 'operator');
        kernel.protocol.emit('device.pair.resolved', {
          requestId: params.requestId,
          deviceId: device.deviceId,
          decision: 'approved',
          ts: Date.now(),
        });
        api.logger.info(`device ${device.deviceId.slice(0, 12)}… approved`, { requestId: params.requestId });
        return { device: publicDevice(device) };
      }),
  });

  api.registerGatewayMethod('device.pair.reject', {
    params: REQUEST_ID,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Reject a pending pairing request.',
    handler: (params: { requestId: string }) =>
      pairingCall(() => {
        const request = runtime.pairing.reject(params.requestId);
        kernel.protocol.emit('device.pair.resolved', {
          requestId: request.requestId,
          deviceId: request.deviceId,
          decision: 'rejected',
          ts: Date.now(),
        });
        return { requestId: request.requestId, deviceId: request.deviceId };
      }),
  });

  api.registerGatewayMethod('device.pair.remove', {
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['deviceId'],
      properties: { deviceId: { type: 'string', minLength: 1 } },
    },
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Forget a paired device and disconnect it.',
    handler: (params: { deviceId: string }) =>
      pairingCall(() => {
        runtime.pairing.remove(params.deviceId);
        const closed = runtime.disconnectDevice(params.deviceId, undefined, 'device removed');
        return { deviceId: params.deviceId, disconnected: closed };
      }),
  });

  api.registerGatewayMethod('device.token.rotate', {
    params: DEVICE_ROLE,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Issue a new device token (the old one stops working).',
    handler: (params: { deviceId: string; role?: string }, ctx) =>
      pairingCall(() => {
        const role = params.role ?? 'operator';
        const token = runtime.pairing.issueToken(params.deviceId, role);
        // Only the device itself gets to see its new bearer token.
        return {
          deviceId: params.deviceId,
          role,
          rotatedAt: new Date().toISOString(),
          ...(ctx.deviceId === params.deviceId ? { token } : {}),
        };
      }),
  });

  api.registerGatewayMethod('device.token.revoke', {
    params: DEVICE_ROLE,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Revoke a device token and close connections that used it.',
    handler: (params: { deviceId: string; role?: string }) =>
      pairingCall(() => {
        const role = params.role ?? 'operator';
        const revoked = runtime.pairing.revokeToken(params.deviceId, role);
        const closed = runtime.disconnectDevice(params.deviceId, role, 'device token revoked', 'device-token');
        return { deviceId: params.deviceId, role, revoked, disconnected: closed };
      }),
  });
}
