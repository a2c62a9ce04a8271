/**
 * For channel authors. A channel plugin declares `channels: ["<id>"]` in its manifest and
 * registers a ChannelPlugin: `start` turns what the platform delivers into InboundMessage
 * objects for `ctx.receive`, `send` delivers one piece. Everything in between is the
 * channels plugin's, behind the kernel's choke point `api.kernel.channels`. `send` must
 * work without `start` (the CLI sends from a process that does not poll), so build
 * clients lazily from config.
 */
export type {
  AckReaction,
  ReplyObserver,
  ChannelAccountContext,
  ChannelLoginParams,
  ChannelLoginState,
  ChannelPlugin,
  ChannelSetup,
  ChannelSetupFailure,
  ChannelSetupField,
  ChannelSetupValues,
  ChannelStatus,
  InboundMedia,
  InboundMessage,
  InboundOutcome,
  OutboundMessage,
  PeerKind,
  SendResult,
} from '../types/channels.js';

export { ChannelSendError } from './errors.js';

export type { ChannelInfo, ChannelsApi, OutboundRequest, OutboundResult, PairingRequest } from '../types/channels.js';

/** Channel config as the pipeline reads it (`channels.<id>`, per-account overrides). */
export {
  channelSection,
  channelSettings,
  configuredAccounts,
  mergedAccountConfig,
  DEFAULT_RETRY,
  DEFAULT_HISTORY_LIMIT,
  type ChannelSettings,
  type DmPolicy,
  type GroupPolicy,
  type GroupSettings,
  type RetrySettings,
} from './config.js';

/** Retry timing: backoff between attempts (or the platform's retry_after), a sleep that never wakes early. */
export { retryDelay, sleepAtLeast, MAX_RETRY_AFTER_MS } from './retry.js';

/** The channel contract suite imports vitest, so it has its own subpath: `@claw-assistant/claw/sdk/channels/contract`. */
export type { ChannelContractTarget, FakePlatform, PlatformMessage, PlatformSent } from './contract.js';

/** `bindings`: which agent answers which channel, account, peer, guild or team (the channels plugin resolves routes with them). */
export { bindingTier, configuredBindings, type Binding, type BindingMatch, type BindingTier } from './bindings.js';

/** The account lifecycle of bot-token channels: running accounts, send-only clients for the rest. */
export { ChannelAccounts, type RunningAccount } from './accounts.js';

/** Reading a channel's setup fields alike in `claw channels add` and the onboard wizard. */
export { parseSetupValue, setupFields, setupValue, writeSetupValue } from './setup.js';
