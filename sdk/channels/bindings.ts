/**
 * `bindings` in config: which agent answers which channel, account, peer, guild or team.
 * The channels plugin resolves routes with them; `claw agents` lists and edits them. A
 * binding's tier is the most specific field it names (OpenClaw's precedence, most specific
 * first): peer → guild + roles → guild → team → account → channel-wide.
 */
import type { KernelConfig } from '../../kernel/index.js';
import type { PeerKind } from '../types/channels.js';

export interface BindingMatch {
  channel?: string;
  accountId?: string;
  peer?: { kind?: PeerKind; id: string };
  guildId?: string;
  teamId?: string;
  roles?: string[];
}

export interface Binding {
  agentId: string;
  match: BindingMatch;
}

export type BindingTier =
  'binding.peer' | 'binding.guild+roles' | 'binding.guild' | 'binding.team' | 'binding.account' | 'binding.channel';

/** The tier a binding belongs to: the most specific field it names. */
export function bindingTier(match: BindingMatch): BindingTier {
  if (match.peer) return 'binding.peer';
  if (match.guildId) return match.roles?.length ? 'binding.guild+roles' : 'binding.guild';
  if (match.teamId) return 'binding.team';
  if (match.accountId && match.accountId !== '*') return 'binding.account';
  return 'binding.channel';
}

/** The well-formed entries of `bindings`. */
export function configuredBindings(config: KernelConfig): Binding[] {
  const list = Array.isArray(config.bindings) ? (config.bindings as Binding[]) : [];
  return list.filter(
    (binding) => typeof binding?.agentId === 'string' && binding.match && typeof binding.match === 'object',
  );
}
