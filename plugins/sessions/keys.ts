/**
 * Session keys the sessions plugin names but no channel derives: node runs, and the
 * legacy group keys of older stores (the SDK's keys.ts holds the grammar everyone reads).
 */
import { normalizeAgentId, normalizeChannelId } from '../../sdk/index.js';

export function nodeSessionKey(nodeId: string): string {
  return `node-${nodeId.trim()}`;
}

/**
 * Older stores and some inbound contexts name groups without agent or channel
 * (`group:<id>`, or `<channel>:group:<id>`); the channel comes from the message's
 * provider. Anything else is returned unchanged.
 */
export function normalizeLegacyKey(key: string, agentId: string, channel: string): string {
  const trimmed = key.trim();
  const agent = normalizeAgentId(agentId);
  if (trimmed.startsWith('group:') && trimmed.length > 'group:'.length) {
    return `agent:${agent}:${normalizeChannelId(channel)}:${trimmed}`;
  }
  const prefixed = /^([a-z0-9_-]+):(group|channel):(.+)$/i.exec(trimmed);
  if (prefixed && !['agent', 'cron', 'hook'].includes(prefixed[1]!.toLowerCase())) {
    return `agent:${agent}:${normalizeChannelId(prefixed[1])}:${prefixed[2]!.toLowerCase()}:${prefixed[3]}`;
  }
  return trimmed;
}
