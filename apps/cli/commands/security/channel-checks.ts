/**
 * Inbound access: who may message the assistant on each channel. `open` policies let any
 * stranger start agent runs (with the agent's tools), so they are called out per channel
 * and per account.
 */
import { channelSettings, configuredAccounts } from '../../../../sdk/channels/config.js';
import { section, type AuditContext, type Finding } from './types.js';

function dmFinding(channel: string, path: string, allowFrom: readonly string[]): Finding {
  const wildcard = allowFrom.includes('*');
  return {
    checkId: `channels.${channel}.dm_open`,
    severity: wildcard ? 'warn' : 'critical',
    title: `Anyone can message the assistant on ${channel}`,
    detail: wildcard
      ? `${path}.dmPolicy is "open": every sender's direct messages start agent runs, with the agent's tools, and no pairing step.`
      : `${path}.dmPolicy is "open" but allowFrom lacks "*": the config fails validation and its meaning is unclear (open to all, or to the list?).`,
    fix: `Set ${path}.dmPolicy to "pairing" (approve people with \`claw pairing approve\`) or "allowlist" with their ids in allowFrom.`,
    fixable: false,
  };
}

function groupFinding(channel: string, path: string): Finding {
  return {
    checkId: `channels.${channel}.group_open`,
    severity: 'warn',
    title: `Any group can use the assistant on ${channel}`,
    detail: `${path}.groupPolicy is "open": any group the bot is added to can start agent runs, and every member's message reaches the agent.`,
    fix: `Set ${path}.groupPolicy to "allowlist" and list the groups in groupAllowFrom (--fix sets "allowlist").`,
    fixable: true,
  };
}

export function channelChecks(ctx: AuditContext): Finding[] {
  const findings = new Map<string, Finding>();
  const add = (finding: Finding, path: string) => findings.set(`${finding.checkId}\u0000${path}`, finding);
  for (const [channel, value] of Object.entries(section(ctx.config.channels))) {
    const root = section(value);
    const hasAccounts = Object.keys(section(root.accounts)).length > 0;
    for (const account of configuredAccounts(root)) {
      // What the channel pipeline would apply to this account, and where it was set.
      const settings = channelSettings(ctx.config, channel, account);
      const own = hasAccounts ? section(section(root.accounts)[account]) : {};
      const accountPath = `channels.${channel}.accounts.${account}`;
      if (settings.dmPolicy === 'open') {
        const path = 'dmPolicy' in own || 'allowFrom' in own ? accountPath : `channels.${channel}`;
        add(dmFinding(channel, path, settings.allowFrom), path);
      }
      if (settings.groupPolicy === 'open') {
        const path = 'groupPolicy' in own ? accountPath : `channels.${channel}`;
        add(groupFinding(channel, path), path);
      }
    }
  }
  return [...findings.values()];
}
