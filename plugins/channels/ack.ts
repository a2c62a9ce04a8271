/**
 * Acknowledgement reactions, resolved as OpenClaw does: the emoji from the account's
 * `ackReaction`, else the channel's, else `messages.ackReaction`, else 👀 ("" turns it
 * off); whether a message gets one from `messages.ackReactionScope` (default
 * "group-mentions": groups when the bot is addressed, never DMs).
 */
import type { AckReaction, InboundMessage, KernelConfig } from '../../sdk/index.js';

export const ACK_REACTION_SCOPES = ['all', 'direct', 'group-all', 'group-mentions', 'off', 'none'] as const;
export type AckReactionScope = (typeof ACK_REACTION_SCOPES)[number];

const DEFAULT_ACK_EMOJI = '👀';

type AnyRecord = Record<string, unknown>;

/** `raw`: the channel's merged config (account keys over the channel's). */
export function ackReactionFor(
  config: KernelConfig,
  raw: AnyRecord,
  message: Pick<InboundMessage, 'peer' | 'mentioned'>,
): AckReaction {
  const messages = ((config as AnyRecord).messages ?? {}) as AnyRecord;
  const removeAfterReply = messages.removeAckAfterReply === true;
  const scope = (ACK_REACTION_SCOPES as readonly unknown[]).includes(messages.ackReactionScope)
    ? (messages.ackReactionScope as AckReactionScope)
    : 'group-mentions';
  const direct = message.peer.kind === 'direct';
  const wanted =
    scope === 'all' ||
    (scope === 'direct' && direct) ||
    (scope === 'group-all' && !direct) ||
    (scope === 'group-mentions' && !direct && message.mentioned === true);
  if (!wanted) return { removeAfterReply };
  const configured = [raw.ackReaction, messages.ackReaction].find((value) => typeof value === 'string');
  const emoji = ((configured as string | undefined) ?? DEFAULT_ACK_EMOJI).trim();
  return emoji ? { emoji, removeAfterReply } : { removeAfterReply };
}
