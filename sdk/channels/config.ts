/**
 * Channel config: `channels.<id>` in openclaw.json, with per-account overrides under
 * `channels.<id>.accounts.<accountId>`. The keys the pipeline reads are defined here;
 * anything else (a bot token, a webhook URL) belongs to the channel plugin. Pure functions
 * of the config, for the channels plugin, channel plugins and apps (`claw security audit`).
 */
import type { KernelConfig } from '../../kernel/index.js';

export type DmPolicy = 'pairing' | 'allowlist' | 'open' | 'disabled';
export type GroupPolicy = 'open' | 'allowlist' | 'disabled';

export interface GroupSettings {
  requireMention?: boolean;
  enabled?: boolean;
  /** Agent for this group (overrides the channel's). */
  agentId?: string;
}

export interface RetrySettings {
  attempts: number;
  minDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

export interface ChannelSettings {
  channel: string;
  accountId: string;
  enabled: boolean;
  dmPolicy: DmPolicy;
  allowFrom: string[];
  groupPolicy: GroupPolicy;
  groupAllowFrom: string[];
  groups: Record<string, GroupSettings>;
  /** Unaddressed group messages kept as context for the next addressed one. */
  historyLimit: number;
  textChunkLimit?: number;
  retry: RetrySettings;
  /** Agent that answers this channel/account (default: the default agent). */
  agentId?: string;
  /** The merged raw object, for the channel plugin's own keys. */
  raw: Record<string, unknown>;
}

export const DEFAULT_RETRY: RetrySettings = { attempts: 3, minDelayMs: 400, maxDelayMs: 30_000, jitter: 0.1 };
export const DEFAULT_HISTORY_LIMIT = 50;

type AnyRecord = Record<string, any>;

export function channelSection(config: KernelConfig, channel: string): AnyRecord | undefined {
  const section = (config.channels as AnyRecord | undefined)?.[channel];
  return section && typeof section === 'object' ? (section as AnyRecord) : undefined;
}

/** Account ids under `channels.<id>.accounts`, or ["default"] when the channel is configured flat. */
export function configuredAccounts(section: AnyRecord | undefined): string[] {
  const accounts =
    section?.accounts && typeof section.accounts === 'object' ? Object.keys(section.accounts as AnyRecord) : [];
  return accounts.length > 0 ? accounts : ['default'];
}

/** The channel section with one account's overrides applied (account keys win), as channelSettings merges it. */
export function mergedAccountConfig(section: AnyRecord | undefined, accountId: string): AnyRecord {
  const { accounts, ...root } = section ?? {};
  const account =
    accounts &&
    typeof accounts === 'object' &&
    !Array.isArray(accounts) &&
    accounts[accountId] &&
    typeof accounts[accountId] === 'object'
      ? (accounts[accountId] as AnyRecord)
      : {};
  return { ...root, ...account };
}

const isPlainRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.filter((item): item is string | number => typeof item === 'string' || typeof item === 'number').map(String)
    : [];

export function channelSettings(
  config: KernelConfig,
  channel: string,
  accountId = 'default',
  defaults: Readonly<Record<string, unknown>> = {},
): ChannelSettings {
  const section = channelSection(config, channel) ?? {};
  const { accounts, ...configured } = section;
  const base: AnyRecord = { ...defaults };
  // Who may write is one decision: configuring either half replaces the default pair, so a
  // default "open to everyone" never leaks into a user's "pairing".
  if ('dmPolicy' in configured || 'allowFrom' in configured || isPlainRecord(configured.dm)) {
    delete base.dmPolicy;
    delete base.allowFrom;
  }
  const root: AnyRecord = { ...base, ...configured };
  const account = ((accounts as AnyRecord | undefined)?.[accountId] ?? {}) as AnyRecord;
  // Account keys win; what an account leaves out comes from the channel root.
  const raw: AnyRecord = { ...root, ...account };
  // OpenClaw's nested spelling (`dm.policy`, `dm.allowFrom`, `dm.enabled`): Matrix's own keys,
  // and the legacy keys of Slack and Discord. The flat keys win where both are set.
  const dm = isPlainRecord(raw.dm) ? raw.dm : {};
  const wantedPolicy = dm.enabled === false ? 'disabled' : (raw.dmPolicy ?? dm.policy);
  const dmPolicy =
    (['pairing', 'allowlist', 'open', 'disabled'] as const).find((policy) => policy === wantedPolicy) ?? 'pairing';
  const groupPolicy =
    (['open', 'allowlist', 'disabled'] as const).find((policy) => policy === raw.groupPolicy) ?? 'allowlist';
  const retry = (raw.retry ?? {}) as AnyRecord;
  return {
    channel,
    accountId,
    enabled: root.enabled !== false && account.enabled !== false,
    dmPolicy,
    allowFrom: strings(raw.allowFrom ?? dm.allowFrom),
    groupPolicy,
    groupAllowFrom: strings(raw.groupAllowFrom),
    groups: (raw.groups && typeof raw.groups === 'object' ? raw.groups : {}) as Record<string, GroupSettings>,
    historyLimit:
      Number.isInteger(raw.historyLimit) && raw.historyLimit >= 0 ? raw.historyLimit : DEFAULT_HISTORY_LIMIT,
    textChunkLimit: Number.isInteger(raw.textChunkLimit) && raw.textChunkLimit > 0 ? raw.textChunkLimit : undefined,
    retry: {
      attempts: Number.isInteger(retry.attempts) && retry.attempts >= 1 ? retry.attempts : DEFAULT_RETRY.attempts,
      minDelayMs: Number.isFinite(retry.minDelayMs) ? retry.minDelayMs : DEFAULT_RETRY.minDelayMs,
      maxDelayMs: Number.isFinite(retry.maxDelayMs) ? retry.maxDelayMs : DEFAULT_RETRY.maxDelayMs,
      jitter: Number.isFinite(retry.jitter) ? retry.jitter : DEFAULT_RETRY.jitter,
    },
    agentId: typeof raw.agentId === 'string' ? raw.agentId : undefined,
    raw,
  };
}
