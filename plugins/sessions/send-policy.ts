/**
 * `session.sendPolicy`: whether replies and agent-to-agent messages may go out to a session,
 * decided by channel, chat type and key prefix (OpenClaw's rule shape). A session's own
 * `sendPolicy` override (sessions.patch) wins over the rules; the first matching `deny`
 * rule wins over any `allow` rule; with no match the policy's `default` (allow) applies.
 */
import { parseSessionKey, type SendDecision, type SessionEntry } from '../../sdk/sessions/index.js';

export interface SendPolicyRule {
  action?: SendDecision;
  match?: { channel?: string; chatType?: string; keyPrefix?: string };
}

export interface SendPolicyConfig {
  default?: SendDecision;
  rules?: SendPolicyRule[];
}

function lower(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim().toLowerCase() : undefined;
}

/** "dm" is the older spelling of "direct". */
function chatTypeOf(value: unknown): string | undefined {
  const type = lower(value);
  return type === 'dm' ? 'direct' : type;
}

function chatTypeFromKey(key: string): string | undefined {
  const kind = parseSessionKey(key).kind;
  if (kind === 'group' || kind === 'channel') return kind;
  if (kind === 'direct' || kind === 'main') return 'direct';
  return undefined;
}

export function resolveSendPolicy(
  config: object,
  target: {
    sessionKey: string;
    entry?: Pick<SessionEntry, 'sendPolicy' | 'channel' | 'lastChannel' | 'chatType'>;
    channel?: string;
    chatType?: string;
  },
): SendDecision {
  const override = target.entry?.sendPolicy;
  if (override === 'allow' || override === 'deny') return override;
  const policy = ((config as { session?: unknown }).session as { sendPolicy?: SendPolicyConfig } | undefined)
    ?.sendPolicy;
  if (!policy) return 'allow';
  const parsed = parseSessionKey(target.sessionKey);
  const channel =
    lower(target.channel) ?? lower(target.entry?.channel) ?? lower(target.entry?.lastChannel) ?? lower(parsed.channel);
  const chatType =
    chatTypeOf(target.chatType) ?? chatTypeOf(target.entry?.chatType) ?? chatTypeFromKey(target.sessionKey);
  const key = target.sessionKey.toLowerCase();
  let allowed = false;
  for (const rule of policy.rules ?? []) {
    const match = rule.match ?? {};
    if (lower(match.channel) && lower(match.channel) !== channel) continue;
    if (chatTypeOf(match.chatType) && chatTypeOf(match.chatType) !== chatType) continue;
    if (lower(match.keyPrefix) && !key.startsWith(lower(match.keyPrefix)!)) continue;
    if ((rule.action ?? 'allow') === 'deny') return 'deny';
    allowed = true;
  }
  return allowed ? 'allow' : (policy.default ?? 'allow');
}
