/**
 * Inbound access: who may message the assistant on each channel. `open` policies (and a "*"
 * in the list a pairing or allowlist policy checks) let any stranger start agent runs, with
 * the agent's tools, so they are called out per channel and per account, under OpenClaw's
 * ids: `channels.<id>.dm.open` (critical, as in OpenClaw), `dm.open_invalid` when "open"
 * lacks the "*" it needs, and `groups.open`. Disabled channels and accounts are skipped.
 */
import { channelOpenings, type Opening } from './facts.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

function dmFindings(opening: Opening): Finding[] {
  const { channel, base, policy, list } = opening;
  const byWildcard = policy !== 'open';
  const findings: Finding[] = [
    {
      checkId: `channels.${channel}.dm.open`,
      severity: 'critical',
      title: `Anyone can message the assistant on ${channel}`,
      detail: byWildcard
        ? `${base}.allowFrom includes "*": with dmPolicy "${policy}" every sender's direct messages start agent runs, ` +
          "with the agent's tools, and no pairing step."
        : `${base}.dmPolicy is "open": every sender's direct messages start agent runs, with the agent's tools, and no pairing step.`,
      fix: byWildcard
        ? `Remove "*" from ${base}.allowFrom and list the people who may write (or approve them with \`claw pairing approve\`).`
        : `Set ${base}.dmPolicy to "pairing" (approve people with \`claw pairing approve\`) or "allowlist" with their ids in allowFrom.`,
      fixable: false,
    },
  ];
  if (!byWildcard && !list.includes('*')) {
    findings.push({
      checkId: `channels.${channel}.dm.open_invalid`,
      severity: 'warn',
      title: `DM policy on ${channel} contradicts its allowlist`,
      detail:
        `${base}.dmPolicy is "open" but allowFrom lacks "*": the config fails validation and its meaning is unclear ` +
        '(open to all, or to the list?).',
      fix: `Use "allowlist" to admit only ${base}.allowFrom, or add "*" to it if everyone is meant.`,
      fixable: false,
    });
  }
  return findings;
}

function groupFinding(opening: Opening): Finding {
  const { channel, base, policy } = opening;
  const byWildcard = policy !== 'open';
  return {
    checkId: `channels.${channel}.groups.open`,
    severity: 'warn',
    title: `Any group can use the assistant on ${channel}`,
    detail:
      (byWildcard
        ? `${base}.groupAllowFrom includes "*", which lets every group past "allowlist"`
        : `${base}.groupPolicy is "open"`) +
      ": any group the bot is added to can start agent runs, and every member's message reaches the agent.",
    fix: byWildcard
      ? `Replace "*" in ${base}.groupAllowFrom with the groups (or senders) you mean.`
      : `Set ${base}.groupPolicy to "allowlist" and list the groups in groupAllowFrom (--fix sets "allowlist").`,
    fixable: !byWildcard,
  };
}

export function channelChecks(ctx: AuditContext): Finding[] {
  return [
    ...channelOpenings(ctx).flatMap((opening) =>
      opening.kind === 'dm' ? dmFindings(opening) : [groupFinding(opening)],
    ),
    ...settingFindings(ctx),
  ];
}

/** Each enabled channel section and account, with the key path it lives at. */
function channelScopes(
  raw: AnyRecord,
): Array<{ channel: string; base: string; value: AnyRecord; inherited: AnyRecord }> {
  const out: Array<{ channel: string; base: string; value: AnyRecord; inherited: AnyRecord }> = [];
  for (const [channel, value] of Object.entries(section(raw.channels))) {
    const root = section(value);
    if (root.enabled === false) continue;
    out.push({ channel, base: `channels.${channel}`, value: root, inherited: root });
    for (const [account, accountValue] of Object.entries(section(root.accounts))) {
      const own = section(accountValue);
      if (own.enabled === false) continue;
      out.push({
        channel,
        base: `channels.${channel}.accounts.${account}`,
        value: own,
        inherited: { ...root, ...own },
      });
    }
  }
  return out;
}

/**
 * Settings that weaken who a sender is or who can read along: name matching (a display name
 * or nick anyone can take passes allowlists; OpenClaw's id) and plaintext transport (an IRC
 * connection with `tls: false` carries messages and passwords readable on the network).
 */
function settingFindings(ctx: AuditContext): Finding[] {
  const findings: Finding[] = [];
  for (const { channel, base, value, inherited } of channelScopes(ctx.config)) {
    if (value.dangerouslyAllowNameMatching === true)
      findings.push({
        checkId: `channels.${channel}.allowFrom.dangerous_name_matching_enabled`,
        severity: 'info',
        title: `Names can pass the allowlists on ${channel}`,
        detail: `${base}.dangerouslyAllowNameMatching is on: a name or nick anyone can take matches allowFrom entries, not only stable sender ids.`,
        fix: `Replace name entries in ${base}.allowFrom with stable ids (on IRC, nick!user@host masks), then turn dangerouslyAllowNameMatching off.`,
        fixable: false,
      });
    if (value.autoJoin === 'always')
      findings.push({
        checkId: `channels.${channel}.invites.auto_join_all`,
        severity: inherited.groupPolicy === 'open' ? 'warn' : 'info',
        title: `Anyone can pull the bot into a room on ${channel}`,
        detail:
          `${base}.autoJoin is "always": every invite is accepted, from anyone on any server` +
          (inherited.groupPolicy === 'open'
            ? `, and with groupPolicy "open" the bot answers everyone in those rooms.`
            : `; the room policy still decides who is answered.`),
        fix: `Set ${base}.autoJoin to "allowlist" with the rooms in autoJoinAllowlist, or "off" and join rooms yourself.`,
        fixable: false,
      });
    if (value.tls === false && typeof inherited.host === 'string')
      findings.push({
        checkId: `channels.${channel}.transport.plaintext`,
        severity: 'warn',
        title: `${channel} connects without TLS`,
        detail: `${base}.tls is false: messages, and any server, SASL or NickServ password, cross the network in plain text to ${inherited.host}.`,
        fix: `Set ${base}.tls to true (port 6697 on most networks), unless the server is on this machine.`,
        fixable: false,
      });
  }
  return findings;
}

/** `--fix`: every `groupPolicy: "open"` in the raw config (channel and account level) becomes "allowlist". */
export function closeOpenGroups(raw: AnyRecord): Array<{ key: string; from: string; to: string }> {
  const changed: Array<{ key: string; from: string; to: string }> = [];
  const close = (holder: AnyRecord, key: string) => {
    if (holder.groupPolicy !== 'open') return;
    holder.groupPolicy = 'allowlist';
    changed.push({ key, from: 'open', to: 'allowlist' });
  };
  for (const [channel, value] of Object.entries(section(raw.channels))) {
    const root = section(value);
    close(root, `channels.${channel}.groupPolicy`);
    for (const [account, accountValue] of Object.entries(section(root.accounts))) {
      close(section(accountValue), `channels.${channel}.accounts.${account}.groupPolicy`);
    }
  }
  return changed;
}
