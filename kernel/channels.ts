/**
 * The channel choke point: `api.kernel.channels`. Every inbound channel message, every
 * outbound send and every pairing decision crosses this one object. The kernel owns the
 * interface; the machinery behind it (pipeline, access control, chunking, retries) is the
 * `api` of the service "channels", provided by the bundled plugins/channels or a
 * replacement, which is loaded the first time it is needed.
 */
import type { CapabilityLookup, ChannelsApi } from './plugin-host/capabilities.js';

/** The service id whose `api` implements ChannelsApi. */
export const CHANNELS_SERVICE = 'channels';

export function channelsFacade(capabilities: CapabilityLookup): ChannelsApi {
  const provider = async (): Promise<ChannelsApi | undefined> => {
    const service = await capabilities.find('service', CHANNELS_SERVICE);
    return service?.api as ChannelsApi | undefined;
  };
  const required = async (what: string): Promise<ChannelsApi> => {
    const api = await provider();
    if (!api) {
      throw new Error(`cannot ${what}: no plugin provides the service "${CHANNELS_SERVICE}" (enable plugins/channels, the bundled "channels" plugin)`);
    }
    return api;
  };
  return {
    status: async () => (await provider().catch(() => undefined))?.status() ?? [],
    receive: async (channel, message) => (await required(`receive a ${channel} message`)).receive(channel, message),
    send: async (request) => (await required(`send to ${request.channel}`)).send(request),
    pairing: {
      list: async (channel) => (await provider().catch(() => undefined))?.pairing.list(channel) ?? [],
      approve: async (channel, code) => (await required('approve a pairing code')).pairing.approve(channel, code),
    },
  };
}
