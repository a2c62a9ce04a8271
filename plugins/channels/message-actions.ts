/**
 * OpenClaw's `message.action` and `poll`, which its `openclaw message …` commands call.
 * claw's channels send messages (text and media) and nothing else: the "send" action goes
 * through the outbound path as the `send` method does; every other action (react, edit,
 * delete, pin, read…) and every poll is refused as OpenClaw refuses an action a channel
 * does not support.
 */
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { unknownChannelProblem } from './send-channel.js';

function invalid(message: string, details?: unknown): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

const TEXT: JsonSchema = { type: 'string', minLength: 1 };

interface ActionParams {
  channel: string;
  action: string;
  params: Record<string, unknown>;
  accountId?: string;
}

interface PollParams {
  to: string;
  question: string;
  options: string[];
  channel?: string;
  accountId?: string;
}

/** A string field of the action's params (OpenClaw's aliases: target for to, text for message). */
function field(params: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = params[name];
    if (typeof value === 'string' && value.trim()) return value;
  }
  return undefined;
}

export function registerMessageActions(api: PluginApi): void {
  const kernel = api.kernel;

  api.registerGatewayMethod('message.action', {
    scope: 'operator.write',
    sideEffect: true,
    params: {
      type: 'object',
      required: ['channel', 'action', 'params'],
      // OpenClaw's agent-runtime context fields (requester, toolContext, sessionKey…) are tolerated.
      properties: {
        channel: TEXT,
        action: TEXT,
        params: { type: 'object' },
        accountId: { type: 'string' },
      },
    },
    description:
      'A channel action: "send" ({to|target, message|text, media?, threadId?, replyTo?}) sends through the outbound path; claw’s channels support no other action.',
    handler: async (request: ActionParams, ctx) => {
      const problem = await unknownChannelProblem(kernel, request.channel);
      if (problem) throw invalid(problem);
      if (request.action !== 'send')
        throw invalid(`Channel ${request.channel} does not support action ${request.action}.`);
      const to = field(request.params, 'to', 'target');
      const text = field(request.params, 'message', 'text');
      const media = [request.params.media, request.params.mediaUrl, request.params.mediaUrls]
        .flat()
        .filter((item): item is string => typeof item === 'string' && item.length > 0);
      if (!to) throw invalid('message.action send needs params.to (or params.target)');
      if (!text && media.length === 0) throw invalid('message.action send needs params.message or media');
      const threadId = field(request.params, 'threadId');
      const replyTo = field(request.params, 'replyTo');
      const accountId = request.accountId || field(request.params, 'accountId');
      const result = await kernel.channels.send({
        channel: request.channel,
        to,
        text: text ?? '',
        ...(accountId ? { accountId } : {}),
        ...(threadId ? { threadId } : {}),
        ...(replyTo ? { replyTo } : {}),
        ...(media.length ? { media } : {}),
        context: { channel: request.channel },
      });
      if (result.cancelled) throw invalid('a message_sending hook cancelled the message', { code: 'CANCELLED' });
      if (!result.delivered)
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, `sending to ${request.channel}:${to} failed: ${result.error}`);
      return {
        runId: ctx.idempotencyKey,
        messageId: result.messageIds.at(-1) ?? null,
        channel: request.channel,
        messageIds: result.messageIds,
      };
    },
  });

  api.registerGatewayMethod('poll', {
    scope: 'operator.write',
    sideEffect: true,
    params: {
      type: 'object',
      required: ['to', 'question', 'options'],
      properties: {
        to: TEXT,
        question: TEXT,
        options: { type: 'array', items: TEXT, minItems: 2, maxItems: 12 },
        channel: { type: 'string' },
        accountId: { type: 'string' },
      },
    },
    description: 'A poll in a chat: refused, as no channel of claw sends polls.',
    handler: async (request: PollParams) => {
      if (request.channel) {
        const problem = await unknownChannelProblem(kernel, request.channel);
        if (problem) throw invalid(problem);
      }
      throw invalid(`unsupported poll channel: ${request.channel || 'none given'} (claw's channels send no polls)`);
    },
  });
}
