/**
 * Elevated mode (`tools.elevated`): a deliberate escape from the sandbox to the host for one
 * exec call (`elevated: true`). Every gate must pass: the global switch, the agent's own
 * switch when it has one, the session not set to `/elevated off`, and — for sessions that
 * came from a channel — the sender on `allowFrom.<channel>` (global and the agent's). The
 * escaped command then faces host exec approvals like any other; elevated never skips them.
 */
import type { SessionEntry } from '../../sdk/sessions/index.js';

type AllowFrom = Record<string, Array<string | number>>;
interface ElevatedConfig {
  enabled?: boolean;
  allowFrom?: AllowFrom;
}

function elevatedOf(
  config: Readonly<Record<string, unknown>>,
  agentId: string,
): { global: ElevatedConfig; agent?: ElevatedConfig } {
  const global = (config.tools as { elevated?: ElevatedConfig } | undefined)?.elevated ?? {};
  const list =
    (config.agents as { list?: Array<{ id?: string; tools?: { elevated?: ElevatedConfig } }> } | undefined)?.list ?? [];
  return { global, agent: list.find((agent) => agent.id === agentId)?.tools?.elevated };
}

/** `from:`, `id:`, `e164:` or no prefix match the sender id; other prefixes need facts sessions do not keep. */
function senderMatches(entries: Array<string | number> | undefined, from: string): boolean {
  return (entries ?? []).some((raw) => {
    const entry = String(raw);
    if (entry === '*') return true;
    const match = /^(from|id|e164):(.*)$/.exec(entry);
    if (match) return match[2] === from;
    return !/^[a-z]+:/.test(entry) && entry === from;
  });
}

/** Undefined when this session may escape the sandbox; otherwise why not. */
export function elevatedRefusal(
  config: Readonly<Record<string, unknown>>,
  agentId: string,
  session: SessionEntry | undefined,
): string | undefined {
  const { global, agent } = elevatedOf(config, agentId);
  if (global.enabled !== true) return 'elevated mode is off (tools.elevated.enabled).';
  if (agent && agent.enabled === false)
    return `elevated mode is off for agent "${agentId}" (agents.list[].tools.elevated.enabled).`;
  if (session?.elevatedLevel === 'off') return 'elevated mode is off for this session (/elevated off).';
  const provider = session?.origin?.provider;
  const from = session?.origin?.from;
  if (!provider) return undefined;
  if (!from || !senderMatches(global.allowFrom?.[provider], from))
    return `the sender is not on tools.elevated.allowFrom.${provider}.`;
  if (agent?.allowFrom && !senderMatches(agent.allowFrom[provider], from))
    return `the sender is not on agent "${agentId}"'s tools.elevated.allowFrom.${provider}.`;
  return undefined;
}
