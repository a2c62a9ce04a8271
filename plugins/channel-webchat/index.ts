/**
 * The WebChat plugin: the `webchat` channel and the browser app the gateway serves at "/".
 *
 * The browser is the platform. It sends with the gateway method `webchat.send` (as an
 * operator the gateway has already authenticated) and the message goes through the
 * kernel's inbound pipeline like any channel's; replies come back as `webchat.message`
 * events addressed to the browser's client id, while the run streams as `chat` events.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ErrorCodes,
  ProtocolError,
  type ChannelAccountContext,
  type InboundMedia,
  type JsonSchema,
  acceptMediaAttachments,
  imageAttachmentsSchema,
  type AttachmentParam,
  definePlugin,
} from '../../sdk/index.js';
import { MediaLinks, registerMediaRoutes } from './media.js';
import { StaticBundle } from './static.js';

export const WEBCHAT_TEXT_LIMIT = 20_000;

/** What `webchat.message` carries: one outbound piece for one browser. */
export interface WebchatMessageEvent {
  id: string;
  /** The browser's client id (the peer the reply is for). */
  to: string;
  accountId: string;
  text: string;
  media: Array<{ url: string; mimeType?: string; caption?: string }>;
  replyTo?: string;
  threadId?: string;
  ts: number;
}

export interface WebchatSendParams {
  text: string;
  clientId: string;
  threadId?: string;
  messageId?: string;
  senderName?: string;
  accountId?: string;
  attachments?: AttachmentParam[];
}

// Ids become parts of session keys, where ":" separates fields.
const ID_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]*$';

const SEND_PARAMS: JsonSchema = {
  type: 'object',
  required: ['text', 'clientId'],
  additionalProperties: false,
  properties: {
    text: { type: 'string', maxLength: 100_000 },
    clientId: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      pattern: ID_PATTERN,
      description: 'Stable id of this browser (kept in localStorage).',
    },
    threadId: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: ID_PATTERN,
      description: 'A conversation of its own (its own session).',
    },
    messageId: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: 'Dedupe key: the same id is answered once.',
    },
    senderName: { type: 'string', maxLength: 100 },
    accountId: { type: 'string', minLength: 1, maxLength: 64 },
    attachments: imageAttachmentsSchema(8, { audio: true }),
  },
};

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** Images inline; audio (a voice note) saved under `dir` as a file the media step transcribes. */
function mediaFrom(attachments: WebchatSendParams['attachments'], dir: string): InboundMedia[] | undefined {
  if (!attachments?.length) return undefined;
  const { images, files } = acceptMediaAttachments(attachments, dir);
  return [...images, ...files];
}

/**
 * Where the built app may be: the configured root, else beside this plugin — apps/web/dist
 * in the source tree, dist/apps/web in the build.
 */
export function bundleCandidates(root: string | undefined, configPath: string): string[] {
  if (root) return [resolve(dirname(configPath), root)];
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, '..', '..', 'apps', 'web', 'dist'), join(here, '..', '..', 'apps', 'web')];
}

/**
 * WebChat is open by default: whoever reaches it passed gateway auth. (When the config sets
 * dmPolicy or allowFrom, the kernel drops both defaults together, so "pairing" never
 * inherits the default "*".)
 */
/** The gateway takes connections while channels still start: a send that early waits this long for WebChat. */
const START_WAIT_MS = 5000;

const OPEN: Readonly<Record<string, unknown>> = { enabled: true, dmPolicy: 'open', allowFrom: ['*'] };

export default definePlugin<{ root?: string }>({
  id: 'channel-webchat',
  register(api) {
    const accounts = new Map<string, ChannelAccountContext>();
    const started = new Set<() => void>();
    /** The account a send goes to, waiting (bounded) for one that is still starting. */
    const runningAccount = async (wanted: string | undefined): Promise<ChannelAccountContext | undefined> => {
      const deadline = Date.now() + START_WAIT_MS;
      for (;;) {
        const accountId = wanted ?? (accounts.has('default') ? 'default' : [...accounts.keys()][0]);
        const account = accountId === undefined ? undefined : accounts.get(accountId);
        const left = deadline - Date.now();
        if (account || left <= 0) return account;
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            started.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, left);
          started.add(wake);
        });
      }
    };
    /** Client ids that have sent since start (for status). */
    const clients = new Set<string>();
    const mediaDir = join(api.kernel.paths.stateDir, 'media', 'webchat');
    registerMediaRoutes(api, new MediaLinks(api.kernel.paths.stateDir));
    const protocol = api.kernel.protocol;
    protocol.registerEvent('webchat.message', api.id, {
      scope: 'operator.read',
      description:
        '{id, to, accountId, text, media, replyTo?, threadId?, ts}: a message for the WebChat browser whose client id is `to`.',
    });

    api.registerChannel({
      id: 'webchat',
      label: 'WebChat',
      textLimit: WEBCHAT_TEXT_LIMIT,
      defaults: OPEN,
      start(ctx) {
        accounts.set(ctx.accountId, ctx);
        for (const wake of [...started]) wake();
        ctx.signal.addEventListener('abort', () => accounts.delete(ctx.accountId), { once: true });
      },
      stop(accountId) {
        accounts.delete(accountId);
      },
      // Works without start (a CLI process sending): the event reaches browsers through
      // whichever gateway shares this kernel, and goes nowhere when none does.
      async send(message) {
        const event: WebchatMessageEvent = {
          id: randomUUID(),
          to: message.to,
          accountId: message.accountId ?? 'default',
          text: message.text ?? '',
          media: message.media ?? [],
          ...(message.replyTo ? { replyTo: message.replyTo } : {}),
          ...(message.threadId ? { threadId: message.threadId } : {}),
          ts: Date.now(),
        };
        protocol.emit('webchat.message', event);
        return { messageId: event.id };
      },
      status: () =>
        [...accounts.keys()].map((accountId) => ({
          accountId,
          connected: true,
          running: true,
          clients: clients.size,
          detail: `${clients.size} browser${clients.size === 1 ? '' : 's'} sent messages since start`,
        })),
    });

    api.registerGatewayMethod('webchat.send', {
      params: SEND_PARAMS,
      scope: 'operator.write',
      sideEffect: true,
      description:
        'A message from a WebChat browser into the channel pipeline. Returns the outcome: {status:"dispatched", sessionKey, runId} to follow as chat events, or why it was not.',
      handler: async (params: WebchatSendParams) => {
        const account = await runningAccount(params.accountId);
        if (!account) {
          throw new ProtocolError(
            ErrorCodes.UNAVAILABLE,
            params.accountId
              ? `WebChat account "${params.accountId}" is not running`
              : 'WebChat is not running (is channels.webchat.enabled false?)',
          );
        }
        const media = mediaFrom(params.attachments, mediaDir);
        if (!params.text.trim() && !media) throw invalid('webchat.send needs text or an attachment');
        clients.add(params.clientId);
        return account.receive({
          accountId: account.accountId,
          peer: { kind: 'direct', id: params.clientId },
          sender: { id: params.clientId, ...(params.senderName ? { name: params.senderName } : {}) },
          text: params.text,
          messageId: params.messageId ?? randomUUID(),
          ...(media ? { media } : {}),
          ...(params.threadId ? { threadId: params.threadId } : {}),
          timestamp: Date.now(),
        });
      },
    });

    const bundle = new StaticBundle(bundleCandidates(api.config.root, api.kernel.paths.configPath));
    api.registerHttpRoute({
      method: 'GET',
      path: '/',
      auth: 'none',
      handler: (req, res) => bundle.servePage(req, res),
    });
    api.registerHttpRoute({
      method: 'GET',
      path: '/assets/*',
      auth: 'none',
      handler: (req, res) => bundle.serveAsset(req, res),
    });
  },
});
