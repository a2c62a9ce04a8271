/**
 * OpenClaw's worker environments (cloud or local workers a session can be placed on), in
 * OpenClaw's shapes. claw runs tools on the gateway host or in its sandboxes and has no
 * worker environments: environments.list (host-methods.ts) is empty, every environment id is
 * unknown, and preparing or destroying one is refused as unavailable.
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import { absent, requiring } from './absent-kit.js';

export function registerAbsentEnvironments(api: PluginApi): void {
  api.registerGatewayMethod('environments.status', {
    params: requiring('environmentId'),
    scope: 'operator.read',
    description: 'One worker environment: claw has none, so every id is unknown.',
    handler: () => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown environmentId');
    },
  });

  api.registerGatewayMethod('environments.prepare', {
    params: requiring('profileId', 'projectPath'),
    scope: 'operator.admin',
    description: 'Prepare a worker environment: unavailable, claw has no worker environments.',
    handler: () => absent('claw has no worker environments to prepare'),
  });

  api.registerGatewayMethod('environments.destroy', {
    params: requiring('environmentId'),
    scope: 'operator.admin',
    description: 'Destroy a worker environment: unavailable, claw has no worker environments.',
    handler: () => absent('claw has no worker environments to destroy'),
  });
}
