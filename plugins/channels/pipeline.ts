/**
 * The inbound pipeline every channel message goes through, in this order, with no way
 * around it:
 *
 *   dedupe → access control (DM policy / pairing, group policy, mention gating) →
 *   route (agent, session key) → typing → the agent loop's queue → the agent →
 *   replies through the one outbound path
 *
 * Group messages that do not address the bot are kept (bounded) and shown to the agent
 * with the next message that does.
 */
import {
  IntakeClosedError,
  unknownAgentProblem,
  type AgentService,
  type DispatchInput,
} from '../../sdk/agent/index.js';
import {
  type ChannelPlugin,
  type InboundMessage,
  type InboundOutcome,
  type KernelConfig,
  type Logger,
  type OutboundRequest,
  type OutboundResult,
} from '../../sdk/index.js';
import { channelSettings, type ChannelSettings } from '../../sdk/channels/index.js';
import { ackReactionFor } from './ack.js';
import { resolveAgentRoute } from './routing.js';
import type { ChannelAccess } from './access.js';
import { SeenStore, seenKeyHash } from './seen-store.js';

const DEDUPE_WINDOW_MS = 20 * 60_000;
const DEDUPE_MAX = 10_000;
const TYPING_REFRESH_MS = 4000;
const TYPING_MAX_MS = 10 * 60_000;

export interface PipelineDeps {
  config(): KernelConfig;
  access: ChannelAccess;
  logger: Logger;
  /** The agent plugin's dispatcher (service "agent"). */
  agent(): Promise<AgentService | undefined>;
  findChannel(id: string): Promise<ChannelPlugin | undefined>;
  send(request: OutboundRequest): Promise<OutboundResult>;
  /** Where accepted message ids are kept across restarts (seen-store.ts); none: memory only. */
  seenFile?: string;
  now?: () => number;
}

export interface HistoryEntry {
  sender: string;
  text: string;
  timestamp: number;
}

export class InboundPipeline {
  private readonly seen: Map<string, number>;
  private readonly store?: SeenStore;
  private readonly history = new Map<string, HistoryEntry[]>();
  private readonly now: () => number;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? Date.now;
    this.store = deps.seenFile ? new SeenStore(deps.seenFile, DEDUPE_WINDOW_MS) : undefined;
    this.seen = this.store?.load(this.now()) ?? new Map();
  }

  async handle(channel: string, message: InboundMessage): Promise<InboundOutcome> {
    const channelPlugin = await this.deps.findChannel(channel).catch(() => undefined);
    const settings = channelSettings(this.deps.config(), channel, message.accountId, channelPlugin?.defaults);

    // 1. Dedupe: platforms redeliver after reconnects and timeouts.
    const key = seenKeyHash(`${channel}\u0000${message.accountId}\u0000${message.peer.id}\u0000${message.messageId}`);
    this.prune();
    if (this.seen.has(key)) return { status: 'duplicate' };
    this.seen.set(key, this.now());

    // 2. Access control.
    const isGroup = message.peer.kind !== 'direct';
    if (!isGroup) {
      // Self-chat is the owner talking to their own account: only "disabled" shuts it out.
      const decision =
        message.fromSelf && settings.dmPolicy !== 'disabled'
          ? ({ allow: true } as const)
          : this.deps.access.checkDm(settings, message.sender);
      if (!decision.allow) {
        if (decision.pairing) {
          if (decision.pairing.created) await this.sendPairingNotice(settings, message, decision.pairing.code);
          return { status: 'pairing', code: decision.pairing.code, created: decision.pairing.created };
        }
        this.deps.logger.info(`${channel}: dropped a direct message: ${decision.reason}`);
        return { status: 'blocked', reason: decision.reason };
      }
    } else {
      const decision =
        channelPlugin?.groupAccess?.(message, settings.raw) ??
        this.deps.access.checkGroup(settings, message.peer.id, message.sender);
      if (!decision.allow) return { status: 'blocked', reason: decision.reason };
      if (decision.requireMention && !message.mentioned) {
        this.remember(channel, message, settings.historyLimit);
        return { status: 'history', reason: 'the bot was not mentioned (requireMention)' };
      }
    }

    // 3. Route: which agent, which session.
    const { agentId, sessionKey: routed } = resolveAgentRoute(
      this.deps.config(),
      {
        channel,
        accountId: message.accountId,
        peer: message.peer,
        ...(message.threadId ? { threadId: message.threadId } : {}),
        ...(message.guildId ? { guildId: message.guildId } : {}),
        ...(message.teamId ? { teamId: message.teamId } : {}),
        ...(message.memberRoleIds ? { memberRoleIds: message.memberRoleIds } : {}),
      },
      channelPlugin?.defaults,
    );
    const sessionKey = message.sessionScope ? `agent:${agentId}:${message.sessionScope}` : routed;

    // A channel or group `agentId` the schema cannot cross-check: refused, never a new agent.
    const unknownAgent = unknownAgentProblem(this.deps.config(), agentId);
    if (unknownAgent) {
      this.deps.logger.warn(`${channel}: dropped a message: ${unknownAgent}`);
      return { status: 'blocked', reason: unknownAgent };
    }
    const agent = await this.deps.agent();
    if (!agent) return { status: 'blocked', reason: 'no agent is enabled (plugin "agent", service "agent")' };

    // 4. Typing shows at once, while the message may still wait in the queue, and is
    // renewed until the reply is out (platforms clear it after a few seconds).
    const typingTarget = {
      accountId: message.accountId,
      to: message.peer.id,
      ...(message.threadId ? { threadId: message.threadId } : {}),
    };
    const typing = channelPlugin?.typing ? () => void channelPlugin.typing!(typingTarget).catch(() => {}) : undefined;
    typing?.();

    // The channel acknowledges the message and may show the reply live while it is written.
    const observer = channelPlugin?.replyStarted?.(message, ackReactionFor(this.deps.config(), settings.raw, message));
    const replyToMode = replyToModeOf(settings.raw.replyToMode, isGroup);

    const dispatch: DispatchInput = {
      agentId,
      sessionKey,
      message: message.text,
      images: (message.media ?? [])
        .filter((item) => item.data && item.mimeType?.startsWith('image/'))
        .map((item) => ({ type: 'image' as const, data: item.data!, mimeType: item.mimeType! })),
      ...(message.media?.some((item) => item.url) ? { attachments: message.media.filter((item) => item.url) } : {}),
      channel,
      accountId: message.accountId,
      from: message.sender.id,
      messageId: message.messageId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
      authorized: isGroup ? this.deps.access.isOwner(settings, message.sender) : true,
      ...(this.contextFor(channel, message, isGroup)
        ? { extraSystemPrompt: this.contextFor(channel, message, isGroup) }
        : {}),
      deliver: {
        channel,
        to: message.replyAddress ?? message.peer.id,
        accountId: message.accountId,
        ...(message.threadId ? { threadId: message.threadId } : {}),
        ...(replyToMode !== 'off'
          ? { replyTo: message.messageId, ...(replyToMode === 'all' ? { replyToMode } : {}) }
          : {}),
        ...(observer?.preview ? { livePreview: true } : {}),
      },
      ...(observer?.preview
        ? {
            onEvent: (event) =>
              void (event.kind === 'chat' && event.state === 'delta' && observer.preview!(event.text)),
          }
        : {}),
    };
    let handle: Awaited<ReturnType<AgentService['dispatch']>>;
    try {
      // Resolves once the message is on disk: only then may the channel confirm it to the platform.
      handle = await agent.dispatch(dispatch);
    } catch (error) {
      void observer?.done('unavailable');
      if (!(error instanceof IntakeClosedError)) throw error;
      // Not accepted: a redelivery (after the restart) must not count as a duplicate.
      this.seen.delete(key);
      return { status: 'unavailable', reason: error.message };
    }
    // On disk only now that the intake journal holds it: a redelivery after a restart is a duplicate.
    try {
      this.store?.record(key, this.seen.get(key) ?? this.now(), this.seen);
    } catch (error) {
      this.deps.logger.warn(
        `${channel}: could not record message ${message.messageId} as handled (a redelivery after a restart may be answered again): ${(error as Error).message}`,
      );
    }
    if (isGroup) this.history.delete(this.historyKey(channel, message));
    if (typing) {
      const timer = setInterval(typing, TYPING_REFRESH_MS);
      timer.unref();
      const stop = () => clearInterval(timer);
      handle.done.then(stop, stop);
      setTimeout(stop, TYPING_MAX_MS).unref();
    }
    if (observer) {
      const finished = (status: string) =>
        Promise.resolve(observer.done(status)).catch((error: unknown) =>
          this.deps.logger.warn(`${channel}: finishing a reply failed: ${(error as Error)?.message ?? String(error)}`),
        );
      handle.done.then(
        (result) => finished(result.status),
        () => finished('error'),
      );
    }
    handle.done.catch((error: unknown) =>
      this.deps.logger.error(
        `${channel}: the run for ${sessionKey} failed: ${(error as Error)?.message ?? String(error)}`,
      ),
    );
    return { status: 'dispatched', sessionKey, runId: handle.runId };
  }

  private historyKey(channel: string, message: InboundMessage): string {
    return `${channel}:${message.accountId}:${message.peer.kind}:${message.peer.id}${message.threadId ? `:${message.threadId}` : ''}`;
  }

  private remember(channel: string, message: InboundMessage, limit: number): void {
    if (limit <= 0 || !message.text.trim()) return;
    const key = this.historyKey(channel, message);
    const entries = this.history.get(key) ?? [];
    entries.push({
      sender: message.sender.name ?? message.sender.username ?? message.sender.id,
      text: message.text,
      timestamp: message.timestamp ?? this.now(),
    });
    while (entries.length > limit) entries.shift();
    this.history.set(key, entries);
  }

  /** Unaddressed messages kept since the bot last answered in this group. */
  groupHistory(
    channel: string,
    message: Pick<InboundMessage, 'accountId' | 'peer' | 'threadId'>,
  ): readonly HistoryEntry[] {
    return this.history.get(this.historyKey(channel, message as InboundMessage)) ?? [];
  }

  private contextFor(channel: string, message: InboundMessage, isGroup: boolean): string | undefined {
    if (!isGroup) return undefined;
    const who = message.sender.name ?? message.sender.username ?? message.sender.id;
    const lines = [
      `This message is from ${who} in the ${channel} ${message.peer.kind} ${message.peerName ? `"${message.peerName}"` : message.peer.id}. Reply to the group; keep it short.`,
    ];
    const history = this.history.get(this.historyKey(channel, message)) ?? [];
    if (history.length > 0) {
      lines.push(
        'Recent messages in the group (not addressed to you), oldest first:',
        ...history.map((entry) => `- ${entry.sender}: ${entry.text.replace(/\s+/g, ' ').slice(0, 500)}`),
      );
    }
    return lines.join('\n');
  }

  private async sendPairingNotice(settings: ChannelSettings, message: InboundMessage, code: string): Promise<void> {
    const text = `I don't know you yet, so I can't answer. Your pairing code is ${code}. Ask my owner to approve it with:\nclaw pairing approve ${settings.channel} ${code}\n(The code expires in one hour.)`;
    const result = await this.deps.send({
      channel: settings.channel,
      to: message.peer.id,
      accountId: message.accountId,
      text,
      context: { channel: settings.channel },
    });
    if (!result.delivered)
      this.deps.logger.warn(
        `${settings.channel}: could not send the pairing code to ${message.sender.id}: ${result.error ?? 'cancelled'}`,
      );
  }

  private prune(): void {
    const cutoff = this.now() - DEDUPE_WINDOW_MS;
    for (const [key, at] of this.seen) {
      if (at >= cutoff && this.seen.size <= DEDUPE_MAX) break;
      this.seen.delete(key);
    }
  }
}

/**
 * `replyToMode` (off | first | all): whether replies quote the message that started them.
 * Unset, a channel keeps the classic behaviour: groups quote it on the first piece, DMs never.
 */
export function replyToModeOf(value: unknown, isGroup: boolean): 'off' | 'first' | 'all' {
  if (value === 'off' || value === 'first' || value === 'all') return value;
  return isGroup ? 'first' : 'off';
}
