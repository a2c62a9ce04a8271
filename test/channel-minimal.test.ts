/**
 * A whole channel in well under 100 lines, written with the SDK, passing the same contract
 * suite as Telegram and WebChat. Its "platform" is an in-memory chat service: users post
 * into it, the bot's sends land in it.
 */
import { channelContractSuite, type PlatformMessage, type PlatformSent } from '../sdk/channels/contract.js';
import { ChannelSendError, type ChannelAccountContext, type InboundMessage } from '../sdk/channels/index.js';
import { definePlugin } from '../sdk/index.js';

// ── The platform (a stand-in for a chat service's API) ─────────────────────────────
class MemoryChat {
  readonly outbox: PlatformSent[] = [];
  listener?: (message: PlatformMessage) => Promise<void>;
  failNextSends = 0;
  async post(message: PlatformMessage): Promise<void> {
    await this.listener?.(message);
  }
}
const chat = new MemoryChat();

// ── The channel plugin ─────────────────────────────────────────────────────────────
const memoryChannel = definePlugin({
  id: 'memory-chat',
  register(api) {
    api.registerChannel({
      id: 'memory-chat',
      label: 'Memory chat',
      textLimit: 500,
      async start(ctx: ChannelAccountContext) {
        chat.listener = async (message) => {
          const inbound: InboundMessage = {
            accountId: ctx.accountId,
            peer: { kind: message.kind, id: message.chatId },
            sender: { id: message.senderId, name: message.senderName },
            text: message.text,
            messageId: message.messageId ?? String(Date.now()),
            mentioned: message.mention ?? false,
            ...(message.threadId ? { threadId: message.threadId } : {}),
          };
          await ctx.receive(inbound);
        };
        ctx.signal.addEventListener('abort', () => (chat.listener = undefined));
      },
      async send(message) {
        if (chat.failNextSends > 0) {
          chat.failNextSends--;
          throw new ChannelSendError('service busy', { retryAfterMs: 10 });
        }
        chat.outbox.push({
          chatId: message.to,
          text: message.text ?? '',
          threadId: message.threadId,
          replyTo: message.replyTo,
        });
        return { messageId: `out-${chat.outbox.length}` };
      },
      status: () => [{ accountId: 'default', connected: chat.listener !== undefined }],
    });
  },
});

// ── The contract ───────────────────────────────────────────────────────────────────
channelContractSuite({
  channel: 'memory-chat',
  plugin: memoryChannel,
  config: () => ({}),
  textLimit: 500,
  groups: true,
  threads: true,
  platform: {
    deliver: (message) => chat.post(message),
    sent: () => chat.outbox,
    reset: () => {
      chat.outbox.length = 0;
      chat.failNextSends = 0;
    },
  },
});
