/**
 * What plugins see of tools and channels. Only the choke points hold the runnable capability:
 * the tool choke point (tools/invoke.ts) calls `execute`, and the plugin providing the service
 * "channels" (the outbound path: message_sending, chunking, retries, message_sent) calls a
 * channel's `send`, which the kernel masks secrets in on the way to the platform. Everyone
 * else gets a tool whose `execute` refuses and a channel whose `send` takes the outbound path,
 * so no plugin can run a tool or reach a platform around policy, hooks and redaction.
 */
import type { Redactor } from '../log.js';
import type { CapabilityLookup, ChannelsApi, ToolDefinition } from './capabilities.js';

type Channel = {
  id: string;
  send(message: { to: string; text?: string; media?: Array<{ url: string }> }): Promise<unknown>;
};

function toolView({ name, label, description, parameters }: ToolDefinition) {
  const execute = () => {
    throw new Error(`tool "${name}" runs only through kernel.tools.invoke (the tool choke point)`);
  };
  return Object.freeze({ name, label, description, parameters, execute });
}

/** A channel is a plain object (the SDK's ChannelPlugin): its other members are kept as they are. */
function channelView(channel: Channel, channels: ChannelsApi, redact: Redactor, outboundPath: boolean) {
  const send: Channel['send'] = outboundPath
    ? (message) => channel.send({ ...redact.value(message), to: message.to })
    : ({ media, ...message }) => {
        const request = {
          ...message,
          channel: channel.id,
          text: message.text ?? '',
          media: media?.map((item) => item.url),
        };
        return channels.send(request);
      };
  return { ...channel, send };
}

/** `lookup` as one plugin sees it; `outboundPath()` is true while that plugin provides the service "channels". */
export function withViews(
  lookup: CapabilityLookup,
  channels: ChannelsApi,
  redact: Redactor,
  outboundPath: () => boolean,
): CapabilityLookup {
  const view = (kind: string, value: any) => {
    if (kind === 'tool' && value) return toolView(value);
    if (kind === 'channel' && value) return channelView(value, channels, redact, outboundPath());
    return value;
  };
  return {
    ...lookup,
    find: (async (kind, name) => view(kind, await lookup.find(kind, name))) as CapabilityLookup['find'],
    get: (async (kind, name) => view(kind, await lookup.get(kind, name))) as CapabilityLookup['get'],
  };
}
