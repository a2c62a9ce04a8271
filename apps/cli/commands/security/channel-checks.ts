/**
 * Inbound access: who may message the assistant on each channel. `open` policies let any
 * stranger start agent runs (with the agent's tools), so they are called out per channel
 * and per account, under OpenClaw's ids: `channels.<id>.dm.open` (critical, as in
 * OpenClaw, "*" or not), `dm.open_invalid` when allowFrom lacks the "*" that "open" needs,
 * and `groups.open`. Disabled channels and accounts receive nothing and are skipped.
 */
import type { KernelConfig } from '../../../../kernel/index.js';
import { channelSettings, configuredAccounts } from '../../../../sdk/channels/config.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

function dmFindings(channel: string, path: string, allowFrom: readonly string[]): Finding[] {
  const findings: Finding[] = [{
    checkId: `channels.${channel}.dm.open`,
    severity: 'critical',
    title: `Anyone can message the assistant on ${channel}`,
    detail: `${path}.dmPolicy is "open": every sender's direct messages start agent runs, with the agent's tools, and no pairing step.`,
    fix: `Set ${path}.dmPolicy to "pairing" (approve people with \`claw pairing approve\`) or "allowlist" with their ids in allowFrom.`,
    fixable: false,
  }];
  if (!allowFrom.includes('*')) {
    findings.push({
      checkId: `channels.${channel}.dm.open_invalid`,
      severity: 'warn',
      title: `DM policy on ${channel} contradicts its allowlist`,
      detail: `${path}.dmPolicy is "open" but allowFrom lacks "*": the config fails validation and its meaning is unclear (open to all, ` +
        `or to the list?).`,
      fix: `Use "allowlist" to admit only ${path}.allowFrom, or add "*" to it if everyone is meant.`,
      fixable: false,
    });
  }
  return findings;
}

function groupFinding(channel: string, path: string): Finding {
  return {
    checkId: `channels.${channel}.groups.open`,
    severity: 'warn',
    title: `Any group can use the assistant on ${channel}`,
    detail:
      `${path}.groupPolicy is "open": any group the bot is added to can start agent runs, ` +
      "and every member's message reaches the agent.",
    fix: `Set ${path}.groupPolicy to "allowlist" and list the groups in groupAllowFrom (--fix sets "allowlist").`,
    fixable: true,
  };
}

export function channelChecks(ctx: AuditContext): Finding[] {
  const findings = new Map<string, Finding[]>();
  for (const [channel, value] of Object.entries(section(ctx.config.channels))) {
    const root = section(value);
    const hasAccounts = Object.keys(section(root.accounts)).length > 0;
    for (const account of configuredAccounts(root)) {
      // What the channel pipeline would apply to this account, and where it was set.
      const settings = channelSettings(ctx.config as KernelConfig, channel, account);
      if (!settings.enabled) continue;
      const own = hasAccounts ? section(section(root.accounts)[account]) : {};
      const accountPath = `channels.${channel}.accounts.${account}`;
      if (settings.dmPolicy === 'open') {
        const path = 'dmPolicy' in own || 'allowFrom' in own ? accountPath : `channels.${channel}`;
        findings.set(`dm\u0000${path}`, dmFindings(channel, path, settings.allowFrom));
      }
      if (settings.groupPolicy === 'open') {
        const path = 'groupPolicy' in own ? accountPath : `channels.${channel}`;
        findings.set(`group\u0000${path}`, [groupFinding(channel, path)]);
      }
    }
  }
  return [...findings.values()].flat();
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
