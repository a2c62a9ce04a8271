/**
 * The webhook half of the `hooks` section, resolved afresh for every request (so edits
 * apply without a restart), and the reasons the endpoints must not serve.
 */
import type { KernelConfig } from '../../sdk/index.js';

export const DEFAULT_HOOKS_PATH = '/hooks';
/** OpenClaw's normal limit: 256 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 262_144;

export interface HookMapping {
  id?: string;
  match?: { path?: string; source?: string };
  action?: 'agent' | 'wake';
  wakeMode?: 'now' | 'next-heartbeat';
  name?: string;
  agentId?: string;
  sessionKey?: string;
  messageTemplate?: string;
  textTemplate?: string;
  deliver?: boolean;
  channel?: string;
  to?: string;
  model?: string;
  thinking?: string;
  timeoutSeconds?: number;
  allowUnsafeExternalContent?: boolean;
}

export interface HooksSection {
  enabled?: boolean;
  token?: string;
  path?: string;
  maxBodyBytes?: number;
  defaultSessionKey?: string;
  allowRequestSessionKey?: boolean;
  allowedSessionKeyPrefixes?: string[];
  allowedAgentIds?: string[];
  mappings?: HookMapping[];
  internal?: Record<string, unknown>;
}

export interface WebhookSettings {
  enabled: boolean;
  token?: string;
  /** Without a trailing slash. */
  path: string;
  maxBodyBytes: number;
  defaultSessionKey?: string;
  allowRequestSessionKey: boolean;
  /** Lower-cased, blanks dropped; empty means any key. */
  allowedSessionKeyPrefixes: string[];
  /** undefined: every agent. */
  allowedAgentIds?: string[];
  mappings: HookMapping[];
}

export function hooksSection(config: KernelConfig): HooksSection {
  return ((config as { hooks?: HooksSection }).hooks ?? {}) as HooksSection;
}

export function webhookSettings(config: KernelConfig): WebhookSettings {
  const section = hooksSection(config);
  const path = (section.path ?? DEFAULT_HOOKS_PATH).replace(/\/+$/, '') || DEFAULT_HOOKS_PATH;
  const agents = section.allowedAgentIds;
  return {
    enabled: section.enabled === true,
    token: section.token?.trim() || undefined,
    path,
    maxBodyBytes: section.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    defaultSessionKey: section.defaultSessionKey?.trim() || undefined,
    allowRequestSessionKey: section.allowRequestSessionKey === true,
    allowedSessionKeyPrefixes: (section.allowedSessionKeyPrefixes ?? [])
      .map((prefix) => prefix.trim().toLowerCase())
      .filter(Boolean),
    allowedAgentIds: agents === undefined || agents.includes('*') ? undefined : agents,
    mappings: section.mappings ?? [],
  };
}

/**
 * Why enabled webhooks must not serve: no token, or the gateway's own secret reused (a
 * leaked hook token would then unlock the whole gateway).
 */
export function webhookProblem(
  settings: WebhookSettings,
  config: KernelConfig,
  env: Readonly<Record<string, string | undefined>>,
  flagSecrets: readonly string[] = [],
): string | undefined {
  if (!settings.enabled) return undefined;
  if (!settings.token)
    return 'hooks.enabled is true but hooks.token is not set: give the webhook endpoints their own long random token';
  const auth = ((config.gateway as { auth?: { token?: string; password?: string } } | undefined)?.auth ?? {}) as {
    token?: string;
    password?: string;
  };
  const gatewaySecrets = [
    auth.token,
    auth.password,
    env.OPENCLAW_GATEWAY_TOKEN,
    env.OPENCLAW_GATEWAY_PASSWORD,
    ...flagSecrets,
  ]
    .map((value) => value?.trim())
    .filter(Boolean);
  if (gatewaySecrets.includes(settings.token)) {
    return 'hooks.token is the same as the gateway token or password: use a separate token for webhooks (a leaked hook token must not unlock the gateway)';
  }
  return undefined;
}

/** The session-key prefix policy: nothing configured admits every key. */
export function sessionKeyAllowed(settings: WebhookSettings, key: string): boolean {
  if (settings.allowedSessionKeyPrefixes.length === 0) return true;
  const lower = key.toLowerCase();
  return settings.allowedSessionKeyPrefixes.some((prefix) => lower.startsWith(prefix));
}

export function agentAllowed(settings: WebhookSettings, agentId: string): boolean {
  return (
    settings.allowedAgentIds === undefined ||
    settings.allowedAgentIds.some((id) => id.trim().toLowerCase() === agentId.toLowerCase())
  );
}
