/**
 * How an agent presents itself (`agents.list` and `agent.identity.get`, OpenClaw's
 * shapes): `agents.list[].identity` first, then the entry's `name`, then what the agent
 * wrote into IDENTITY.md in its workspace (`- Name: …`, `- Emoji: …` lines).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelConfig } from '../../kernel/index.js';
import { agentEntry } from './settings.js';

export interface AgentIdentity {
  name?: string;
  emoji?: string;
  avatar?: string;
  theme?: string;
  /** The avatar when it is a URL a client can load as is (http(s) or data:). */
  avatarUrl?: string;
}

const FIELDS = ['name', 'emoji', 'avatar', 'theme'] as const;

/** `- Name: Clawd` / `**Emoji:** 🦞` lines; template placeholders in parentheses do not count. */
export function parseIdentityMarkdown(text: string): AgentIdentity {
  const out: AgentIdentity = {};
  for (const line of text.split('\n')) {
    const match = /^\s*(?:[-*]\s*)?(?:\*\*)?([A-Za-z]+)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.+?)\s*$/.exec(line);
    const key = match?.[1]!.toLowerCase() as (typeof FIELDS)[number] | undefined;
    const value = match?.[2]!.replace(/^\*\*\s*/, '').trim();
    if (!key || !value || !FIELDS.includes(key) || /^\(.*\)$/.test(value) || out[key]) continue;
    out[key] = value;
  }
  return out;
}

export function resolveAgentIdentity(config: KernelConfig, agentId: string, workspaceDir?: string): AgentIdentity {
  const entry = agentEntry(config, agentId) ?? {};
  let file: AgentIdentity = {};
  if (workspaceDir) {
    try {
      file = parseIdentityMarkdown(readFileSync(join(workspaceDir, 'IDENTITY.md'), 'utf8'));
    } catch {
      // No IDENTITY.md (yet): config alone.
    }
  }
  const configured = (entry.identity ?? {}) as AgentIdentity;
  const identity: AgentIdentity = {};
  for (const field of FIELDS) {
    const value = configured[field] ?? (field === 'name' ? entry.name : undefined) ?? file[field];
    if (typeof value === 'string' && value.trim()) identity[field] = value.trim();
  }
  if (identity.avatar && /^(https?:\/\/|data:image\/)/i.test(identity.avatar)) identity.avatarUrl = identity.avatar;
  return identity;
}
