/**
 * The `message` tool: the agent sends a message now — to the conversation it is in, or to
 * another chat on any channel — through the kernel's one outbound path (the same hooks,
 * chunking and retries as a reply).
 */
import type { ToolDefinition } from '../../sdk/index.js';
import { errorResult, jsonResult } from '../../sdk/index.js';
import type { AgentRuntime } from './runtime.js';

interface MessageParams {
  text: string;
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string;
  replyTo?: string;
  media?: string[];
}

export function messageTool(runtime: AgentRuntime): ToolDefinition<MessageParams> {
  return {
    name: 'message',
    label: 'Message',
    description:
      'Send a message now, through a chat channel. Without `channel`/`to` it goes to the conversation you are in. Use it for extra messages or other chats; your normal answer is delivered anyway.',
    parameters: {
      type: 'object',
      required: ['text'],
      additionalProperties: false,
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 20_000 },
        channel: {
          type: 'string',
          minLength: 1,
          description: 'Channel id, e.g. telegram. Default: this conversation.',
        },
        to: {
          type: 'string',
          minLength: 1,
          description: 'Chat / user id on that channel. Default: this conversation.',
        },
        accountId: { type: 'string', minLength: 1 },
        threadId: { type: 'string', minLength: 1 },
        replyTo: { type: 'string', minLength: 1, description: 'Message id to reply to.' },
        media: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          maxItems: 10,
          description: 'URLs of images or files to attach.',
        },
      },
    },
    async execute(params, ctx) {
      const agentId = ctx.agentId ?? runtime.defaultAgent();
      const entry = ctx.sessionKey ? await runtime.store(agentId).get(ctx.sessionKey) : undefined;
      const here = entry?.deliveryContext;
      const channel = params.channel ?? here?.channel;
      const to = params.to ?? (params.channel && params.channel !== here?.channel ? undefined : here?.to);
      if (!channel || !to)
        return errorResult('message: this conversation has no channel to send to; give channel and to');
      const sameChat = channel === here?.channel && to === here?.to;
      const result = await runtime.kernel.channels.send({
        channel,
        to,
        text: params.text,
        ...(params.media ? { media: params.media } : {}),
        ...((params.accountId ?? (sameChat ? here?.accountId : undefined))
          ? { accountId: params.accountId ?? here?.accountId }
          : {}),
        ...((params.threadId ?? (sameChat && here?.threadId !== undefined ? String(here.threadId) : undefined))
          ? { threadId: params.threadId ?? String(here!.threadId) }
          : {}),
        ...(params.replyTo ? { replyTo: params.replyTo } : {}),
        context: { agentId, sessionKey: ctx.sessionKey, runId: ctx.runId, channel },
      });
      if (result.cancelled) return errorResult('message: a message_sending hook cancelled the message');
      if (!result.delivered) return errorResult(`message: sending to ${channel}:${to} failed: ${result.error}`);
      if (ctx.runId) runtime.noteToolSend(ctx.runId, channel, to, result.text);
      return jsonResult({ delivered: true, channel, to, pieces: result.pieces, messageIds: result.messageIds });
    },
  };
}
