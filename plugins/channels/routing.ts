/**
 * Which agent answers an inbound message, and under which session key: the one routing
 * function every inbound path uses (the channels pipeline, and through it WebChat and
 * every channel plugin). OpenClaw's precedence, most specific first, list order deciding
 * within a tier:
 *
 *   peer binding → guild + roles → guild → team → account → channel-wide binding
 *   → the default agent (`agents.list[].default`, else the first listed, else "main")
 *
 * A binding matches when every field it names matches; the most specific field it names
 * puts it in its tier, so a peer binding beats a channel binding wherever it is listed.
 * claw's own per-channel keys slot in beside them: `channels.<id>.groups.<id>.agentId`
 * right after peer bindings, `channels.<id>[.accounts.<id>].agentId` after the bindings.
 */
import { buildAgentMainSessionKey, normalizeAgentId, type KernelConfig, type PeerKind } from '../../sdk/index.js';
import { defaultAgentId } from '../../sdk/agent/index.js';
import { deriveSessionKey, type SessionKeyConfig } from './session-key.js';
import {
  bindingTier,
  channelSettings,
  configuredBindings,
  type BindingMatch,
  type BindingTier,
} from '../../sdk/channels/index.js';

export interface RouteInput {
  channel: string;
  accountId?: string;
  peer: { kind: PeerKind; id: string };
  threadId?: string | number;
  guildId?: string;
  teamId?: string;
  memberRoleIds?: readonly string[];
}

/** The binding tiers, most specific first. */
const BINDING_TIERS: readonly BindingTier[] = [
  'binding.peer',
  'binding.guild+roles',
  'binding.guild',
  'binding.team',
  'binding.account',
  'binding.channel',
];

export type RouteMatch = BindingTier | 'channel.group' | 'channel.agentId' | 'default';

export interface ResolvedRoute {
  agentId: string;
  channel: string;
  accountId: string;
  sessionKey: string;
  mainSessionKey: string;
  matchedBy: RouteMatch;
  /** The binding that decided, when one did (index into `bindings`). */
  bindingIndex?: number;
}

const same = (a: string | undefined, b: string | undefined) =>
  (a ?? '').trim().toLowerCase() === (b ?? '').trim().toLowerCase();

/** Whether every field the binding names matches the message. */
export function bindingMatches(match: BindingMatch, input: RouteInput): boolean {
  const accountId = input.accountId ?? 'default';
  if (match.channel && !same(match.channel, input.channel)) return false;
  if (match.accountId && match.accountId !== '*' && match.accountId !== accountId) return false;
  if (match.peer && (match.peer.id !== input.peer.id || (match.peer.kind && match.peer.kind !== input.peer.kind)))
    return false;
  if (match.guildId && match.guildId !== input.guildId) return false;
  if (match.teamId && match.teamId !== input.teamId) return false;
  if (match.roles?.length && !match.roles.some((role) => input.memberRoleIds?.includes(role))) return false;
  return true;
}

/** `channelDefaults`: the channel plugin's defaults under its config (as the pipeline reads them). */
export function resolveAgentRoute(
  config: KernelConfig,
  input: RouteInput,
  channelDefaults?: Readonly<Record<string, unknown>>,
): ResolvedRoute {
  const accountId = input.accountId ?? 'default';
  const bindings = configuredBindings(config);
  const matching = bindings
    .map((binding, index) => ({ binding, index }))
    .filter(({ binding }) => bindingMatches(binding.match, input));
  const first = (tier: BindingTier) => matching.find(({ binding }) => bindingTier(binding.match) === tier);
  const settings = channelSettings(config, input.channel, accountId, channelDefaults);
  const group = input.peer.kind !== 'direct' ? settings.groups[input.peer.id]?.agentId : undefined;

  let decided: { agentId: string; matchedBy: RouteMatch; bindingIndex?: number } | undefined;
  for (const tier of BINDING_TIERS) {
    const hit = first(tier);
    if (hit) decided = { agentId: hit.binding.agentId, matchedBy: tier, bindingIndex: hit.index };
    else if (tier === 'binding.peer' && group) decided = { agentId: group, matchedBy: 'channel.group' };
    if (decided) break;
  }
  decided ??= settings.agentId
    ? { agentId: settings.agentId, matchedBy: 'channel.agentId' }
    : { agentId: defaultAgentId(config), matchedBy: 'default' };

  const agentId = normalizeAgentId(decided.agentId);
  // A binding's own `session` (OpenClaw's `bindings[].session`) wins over `session.*` for what it routes.
  const own = decided.bindingIndex === undefined ? undefined : bindingSession(bindings[decided.bindingIndex]);
  const session = { ...(config.session as SessionKeyConfig | undefined), ...own };
  const sessionKey = deriveSessionKey(
    {
      agentId,
      channel: input.channel,
      accountId,
      peer: input.peer,
      ...(input.threadId !== undefined ? { threadId: input.threadId } : {}),
    },
    session,
  );
  return {
    ...decided,
    agentId,
    channel: input.channel,
    accountId,
    sessionKey,
    mainSessionKey: buildAgentMainSessionKey(agentId, session.mainKey),
  };
}

/** The session-keying settings a binding carries (`session.groupScope`); the schema checked the values. */
function bindingSession(binding: unknown): Pick<SessionKeyConfig, 'groupScope'> | undefined {
  const groupScope = (binding as { session?: { groupScope?: SessionKeyConfig['groupScope'] } }).session?.groupScope;
  return groupScope ? { groupScope } : undefined;
}
