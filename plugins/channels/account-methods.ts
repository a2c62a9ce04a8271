/**
 * OpenClaw's per-account channel controls: channels.start and channels.stop (run or halt one
 * account now, without a config change) and channels.pairing.approve / dismiss, which act on
 * a waiting DM pairing request by the id channels.pairing.list gives it rather than by code.
 */
import { channelSettings } from '../../sdk/channels/index.js';
import { ErrorCodes, ProtocolError, type ChannelPlugin, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import type { ChannelManager } from './manager.js';
import { pairingRequestId } from './pairing-request-id.js';

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

const ACCOUNT_PARAMS: JsonSchema = {
  type: 'object',
  required: ['channel'],
  properties: { channel: { type: 'string', minLength: 1 }, accountId: { type: 'string' } },
};

const PAIRING_PARAMS: JsonSchema = {
  type: 'object',
  required: ['channel', 'accountId', 'requestId'],
  properties: {
    channel: { type: 'string', minLength: 1 },
    accountId: { type: 'string', minLength: 1 },
    requestId: { type: 'string', minLength: 1 },
    notify: { type: 'boolean' },
    bootstrapCommandOwner: { type: 'boolean' },
  },
};

interface PairingParams {
  channel: string;
  accountId: string;
  requestId: string;
  notify?: boolean;
  bootstrapCommandOwner?: boolean;
}

export function registerAccountMethods(api: PluginApi, manager: ChannelManager): void {
  const kernel = api.kernel;

  const channelOf = async (id: string): Promise<ChannelPlugin> => {
    const declared = kernel.capabilities.list('channel').some((info) => info.name === id);
    const plugin = declared ? await kernel.capabilities.find('channel', id) : undefined;
    if (!plugin) throw invalid(`unknown channel: ${id}`);
    return plugin;
  };
  // No account named: the channel's "default" account, else its first one.
  const accountOf = (plugin: ChannelPlugin, accountId: string | undefined): string => {
    if (accountId?.trim()) return accountId.trim();
    const ids = manager.accountIds(plugin);
    return ids.includes('default') ? 'default' : (ids[0] ?? 'default');
  };

  api.registerGatewayMethod('channels.start', {
    params: ACCOUNT_PARAMS,
    scope: 'operator.admin',
    description:
      'Start one channel account now: {channel, accountId, started, outcome} (outcome handed-off, or skipped with the reason).',
    handler: async (params: { channel: string; accountId?: string }) => {
      const plugin = await channelOf(params.channel);
      if (!plugin.start) throw invalid(`channel ${plugin.id} does not support start`);
      const accountId = accountOf(plugin, params.accountId);
      return { channel: plugin.id, accountId, ...(await manager.startOne(plugin, accountId)) };
    },
  });

  api.registerGatewayMethod('channels.stop', {
    params: ACCOUNT_PARAMS,
    scope: 'operator.admin',
    description: 'Stop one channel account until the next start or gateway restart: {channel, accountId, stopped}.',
    handler: async (params: { channel: string; accountId?: string }) => {
      const plugin = await channelOf(params.channel);
      const accountId = accountOf(plugin, params.accountId);
      return { channel: plugin.id, accountId, ...(await manager.stopOne(plugin, accountId)) };
    },
  });

  const waiting = (params: PairingParams) => {
    if (channelSettings(kernel.config(), params.channel, params.accountId).dmPolicy !== 'pairing')
      throw invalid(`channel account does not use DM pairing: ${params.channel}:${params.accountId}`);
    return (request: { accountId: string } & Parameters<typeof pairingRequestId>[0]) =>
      request.accountId === params.accountId && pairingRequestId(request) === params.requestId;
  };
  const gone = () => invalid('pending DM access request no longer exists');

  api.registerGatewayMethod('channels.pairing.approve', {
    params: PAIRING_PARAMS,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description:
      'Approve a waiting DM pairing request by its id: the sender may message the assistant from now on. claw sends no approval notice and has no command owners.',
    handler: async (params: PairingParams) => {
      const matches = waiting(params);
      const request = (await manager.pairing.list(params.channel)).find(matches);
      const approved = request && (await manager.pairing.approve(params.channel, request.code));
      if (!approved) throw gone();
      return {
        requestId: params.requestId,
        senderId: approved.senderId,
        notification: params.notify ? 'unsupported' : 'not-requested',
        commandOwnerBootstrap: params.bootstrapCommandOwner ? 'unavailable' : 'not-requested',
      };
    },
  });

  api.registerGatewayMethod('channels.pairing.dismiss', {
    params: PAIRING_PARAMS,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description:
      'Drop a waiting DM pairing request without approving it; the sender is not blocked (a new message asks again).',
    handler: (params: PairingParams) => {
      const dismissed = manager.access.dismiss(params.channel, waiting(params));
      if (!dismissed) throw gone();
      return { requestId: params.requestId, senderId: dismissed.senderId };
    },
  });
}
