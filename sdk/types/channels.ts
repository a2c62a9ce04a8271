/**
 * The channel contract: what a channel plugin registers (`api.registerChannel`), what it
 * hands the pipeline, and the typed face of the kernel's channel choke point
 * (`api.kernel.channels`). The kernel stores a channel as any object with an `id` and a
 * `send`; these types are what the channels plugin and every transport agree on.
 *
 * A channel plugin is a transport: it turns what a platform delivers into an
 * InboundMessage and hands it to `ctx.receive`, and it sends one already-shaped piece of
 * text or media when asked. Everything between — dedupe, access control, session keys,
 * queueing, the agent, hooks, chunking, retries — is one pipeline behind the kernel's
 * channel choke point (plugins/channels provides it), so no channel can skip a step.
 */
import type { HookContext, Logger } from '../../kernel/index.js';

export type PeerKind = 'direct' | 'group' | 'channel';

export interface InboundMedia {
  /** Where to fetch it (an http(s) URL the channel serves or a local file path). */
  url?: string;
  /** Inline content, base64. */
  data?: string;
  mimeType?: string;
  fileName?: string;
  caption?: string;
}

/** One received message, normalised. */
export interface InboundMessage {
  accountId: string;
  /** The conversation: the sender (direct) or the group / channel / room. */
  peer: { kind: PeerKind; id: string };
  sender: { id: string; name?: string; username?: string };
  text: string;
  /** The platform's id for the message (dedupe key, reply target). */
  messageId: string;
  media?: InboundMedia[];
  /** Forum topic / thread inside the peer. */
  threadId?: string;
  replyTo?: { messageId: string; text?: string; senderId?: string };
  /** The bot was addressed (mention, reply to the bot, or a command) — for mention gating. */
  mentioned?: boolean;
  /** Group title, for labels and the group context line. */
  peerName?: string;
  timestamp?: number;
  /** Discord server the message came from (routing bindings `match.guildId`). */
  guildId?: string;
  /** Slack workspace the message came from (routing bindings `match.teamId`). */
  teamId?: string;
  /** The sender's role ids in the guild (routing bindings `match.roles`). */
  memberRoleIds?: string[];
  /**
   * The account's own user wrote it to themselves (WhatsApp self-chat): admitted as the
   * owner without being in allowFrom, unless direct messages are disabled.
   */
  fromSelf?: boolean;
  /**
   * A session apart from the conversation's (Slack's slash commands): the key becomes
   * `agent:<agentId>:<sessionScope>`; access and agent routing still follow `peer`.
   */
  sessionScope?: string;
  /** Where replies go instead of `peer.id`: a channel-specific address its `send` understands. */
  replyAddress?: string;
}

/** What became of an inbound message. */
export type InboundOutcome =
  | { status: 'dispatched'; sessionKey: string; runId: string }
  | { status: 'duplicate' }
  | { status: 'pairing'; code: string; created: boolean }
  | { status: 'blocked'; reason: string }
  | { status: 'history'; reason: string }
  /** Not accepted (the gateway is shutting down): the platform should deliver it again later. */
  | { status: 'unavailable'; reason: string };

export interface OutboundMessage {
  accountId?: string;
  /** Peer id to send to (chat id, channel id, phone number). */
  to: string;
  text?: string;
  /** `voice`: send as a voice note where the platform has them (Telegram sendVoice, WhatsApp PTT). */
  media?: Array<{ url: string; mimeType?: string; caption?: string; voice?: boolean }>;
  replyTo?: string;
  threadId?: string;
}

export interface SendResult {
  messageId?: string;
  [key: string]: unknown;
}

/** Thrown by a channel's send: whether (and when) the kernel should try again. */
export interface ChannelSendFailure extends Error {
  retryable?: boolean;
  retryAfterMs?: number;
}

export interface ChannelStatus {
  accountId: string;
  connected: boolean;
  running?: boolean;
  detail?: string;
  lastError?: string;
  [key: string]: unknown;
}

/** Passed to `start` for one account. */
export interface ChannelAccountContext {
  accountId: string;
  /** The channel's config (`channels.<id>`) with the account's overrides applied. */
  config: Readonly<Record<string, unknown>>;
  logger: Logger;
  /** Aborted when the account stops. */
  signal: AbortSignal;
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Hand a received message to the pipeline; resolves once it is accepted or refused. */
  receive(message: InboundMessage): Promise<InboundOutcome>;
}

export interface ChannelPlugin {
  id: string;
  label?: string;
  /** Longest text one outbound message may carry; longer text is cut to fit. */
  textLimit: number;
  /**
   * Longest caption an attachment may carry. Set when the platform has captions: text this
   * short goes out with the first attachment as one message, longer text after the media.
   */
  captionLimit?: number;
  /**
   * Config this channel has before the user writes any (`channels.<id>` is merged over it).
   * With `enabled: true` the channel runs without being configured — for channels whose
   * access is already controlled elsewhere (WebChat rides on gateway auth).
   */
  defaults?: Readonly<Record<string, unknown>>;
  /** Account ids configured for this channel (default: the keys of `accounts`, else "default"). */
  accounts?(config: Readonly<Record<string, unknown>>): string[];
  start?(ctx: ChannelAccountContext): void | Promise<void>;
  stop?(accountId: string): void | Promise<void>;
  /** Send one piece (already within textLimit). Throw a ChannelSendFailure to ask for a retry. */
  send(message: OutboundMessage): Promise<SendResult>;
  /**
   * The pipeline is handing this message to the agent: the channel may acknowledge it
   * (`ack.emoji`, resolved from ackReaction / messages.ackReactionScope) and return an
   * observer that sees the reply as it is written and hears when the run ends.
   */
  replyStarted?(message: InboundMessage, ack: AckReaction): ReplyObserver | undefined;
  /** Show "typing…" while the agent works, when the platform has it. */
  typing?(target: { accountId: string; to: string; threadId?: string }): Promise<void>;
  status?(): ChannelStatus[] | Promise<ChannelStatus[]>;
  /** How an account is set up: `claw channels add|login|logout` and the onboard wizard's "Add a channel". */
  setup?: ChannelSetup;
  /**
   * The channel's own group rules (Discord's guilds → channels allowlists), given the
   * account's merged config. A verdict replaces the generic groupPolicy / groups check;
   * undefined leaves it to them. Mention gating and history stay the pipeline's.
   */
  groupAccess?(
    message: InboundMessage,
    config: Readonly<Record<string, unknown>>,
  ): { allow: true; requireMention: boolean } | { allow: false; reason: string } | undefined;
  /** QR login (OpenClaw's `web.login.start`): begin linking an account; answers with the first QR, or connected. */
  loginStart?(params: ChannelLoginParams): Promise<ChannelLoginState>;
  /** `web.login.wait`: resolves once linked, when the QR changes from `currentQr`, or after `timeoutMs`. */
  loginWait?(params: ChannelLoginParams & { currentQr?: string }): Promise<ChannelLoginState>;
  /** `channels.logout`: stop the account and remove its credentials. */
  logout?(accountId?: string): Promise<{ accountId: string; cleared: boolean }>;
}

/** One setting an account is set up with: a `claw channels add` flag and a wizard question. */
export interface ChannelSetupField {
  /** The flag without dashes ("bot-token"); a boolean also takes `--no-<flag>`. */
  flag: string;
  /** The account's config key it is written to; a dot nests ("nickserv.password"). */
  key: string;
  /** Text (default), a whole number, on/off, or a comma-separated list (written as an array). */
  type?: 'text' | 'integer' | 'boolean' | 'list';
  /** The values allowed (the wizard offers them as a select). Unset means the first, as a boolean unset means on. */
  choices?: readonly string[];
  /** What it is, for `--help` and the wizard ("Bot token (xoxb-…, from OAuth & Permissions)"). */
  label: string;
  /** A token or password: masked when typed, never printed, removed by `claw channels logout`. */
  secret?: boolean;
  /** The variable the channel reads when the key is unset (default account only): what `--use-env` checks. */
  env?: string;
  /** The account cannot run without it. */
  required?: boolean;
  /** Only for some setups (Slack's app token in socket mode), given the other values; otherwise refused. */
  when?(values: ChannelSetupValues): boolean;
}

/** The account's config keys as they would be written, with what `--use-env` stands in for. */
export type ChannelSetupValues = Readonly<Record<string, unknown>>;

export interface ChannelSetup {
  fields: readonly ChannelSetupField[];
  /** A few words for the wizard's channel list ("bot token + app token"). */
  hint?: string;
  /** Check the values with the platform before anything is written; throws a ChannelSetupFailure when refused. */
  verify?(values: ChannelSetupValues, accountId: string): Promise<{ name: string }>;
}

/** Why setup values were refused; `flag` names the field to ask again. */
export interface ChannelSetupFailure extends Error {
  flag?: string;
}

export interface ChannelLoginParams {
  accountId?: string;
  /** Start over with a new QR even when the account is linked. */
  force?: boolean;
  timeoutMs?: number;
}

/** Where a QR login stands (the answer of `web.login.start` / `web.login.wait`). */
export interface ChannelLoginState {
  accountId: string;
  /** Linked and connected: nothing left to scan. */
  connected: boolean;
  /** The QR payload to scan now, while waiting. */
  qr?: string;
  /** The same QR as an image (data: URL) for the web UI. */
  qrDataUrl?: string;
  message: string;
}

/** The acknowledgement reaction for one inbound message (none when `emoji` is absent). */
export interface AckReaction {
  emoji?: string;
  /** `messages.removeAckAfterReply`: take it back once the run is over. */
  removeAfterReply: boolean;
}

/** A channel's view of one reply while the agent writes it. */
export interface ReplyObserver {
  /**
   * The reply's text so far (the current model message), a few times a second. A channel
   * that has this shows the reply live (Telegram edits one message); block streaming is
   * then off for the reply, so nothing is streamed twice.
   */
  preview?(text: string): void;
  /** The run is over and its replies went out (or it was not accepted: "unavailable"). */
  done(status: string): void | Promise<void>;
}

/** One message for the outbound path (`api.kernel.channels.send`). */
export interface OutboundRequest {
  /** Channel id ("telegram"), or an internal surface ("gateway", "cli") that has no transport. */
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string;
  text: string;
  media?: string[];
  replyTo?: string;
  /** `replyTo` on the first piece only (default) or on every piece ("all"). */
  replyToMode?: 'first' | 'all';
  /** Who is sending (agent, session, run) — passed to the hooks. */
  context?: HookContext;
  /** Send through this instead of the channel plugin (callers with their own transport). */
  transport?: (message: OutboundMessage) => Promise<SendResult | void>;
  /**
   * Called the moment the transport has taken the last piece, before any hook runs: a caller
   * that must remember the reply went out (a durable outbox) records it here, so a crash
   * right after the platform answered leaves the least room for sending it twice.
   */
  onDelivered?: () => void;
}

export interface OutboundResult {
  /** Everything reached the transport (true for surfaces without one). */
  delivered: boolean;
  /** A message_sending handler cancelled it. */
  cancelled: boolean;
  /** The text as sent (after message_sending). */
  text: string;
  pieces: number;
  attempts: number;
  messageIds: string[];
  /** Attachments left out (outside the allowed folders, missing): the text went with a note instead. */
  mediaRefused?: string[];
  error?: string;
  /** The platform's retry_after on the last failure, when it gave one: the earliest a caller should try again. */
  retryAfterMs?: number;
}

/** A sender waiting for the owner to approve their pairing code. */
export interface PairingRequest {
  code: string;
  channel: string;
  accountId: string;
  senderId: string;
  senderName?: string;
  createdAt: number;
  expiresAt: number;
}

export interface ChannelInfo {
  id: string;
  pluginId: string;
  configured: boolean;
  enabled: boolean;
  accounts: Array<
    ChannelStatus & { running: boolean; lastError?: string; lastInboundAt?: number; lastOutboundAt?: number }
  >;
}

/**
 * The channel choke point (`api.kernel.channels`): inbound dispatch, the one outbound path,
 * pairing and status. The kernel forwards each call to the `api` of the service "channels"
 * (the bundled plugins/channels); another plugin may provide it instead.
 */
export interface ChannelsApi {
  /** Channels declared by enabled plugins, with their accounts' state. */
  status(): Promise<ChannelInfo[]>;
  /** The inbound pipeline (channels call it through their account context). */
  receive(channel: string, message: InboundMessage): Promise<InboundOutcome>;
  /** The one outbound path. */
  send(request: OutboundRequest): Promise<OutboundResult>;
  pairing: {
    list(channel?: string): Promise<PairingRequest[]>;
    approve(channel: string, code: string): Promise<PairingRequest | undefined>;
  };
}
