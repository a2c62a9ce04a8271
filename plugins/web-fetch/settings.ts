/**
 * tools.web.fetch with OpenClaw's defaults filled in and its clamps applied; its shape is
 * this plugin's (schemas.ts, typed by generated/types.ts).
 */
import type { SsrfPolicy } from '../../sdk/net/index.js';
import type { WebFetchTools } from './generated/types.js';

export interface FetchSettings {
  enabled: boolean;
  maxChars: number;
  maxCharsCap: number;
  maxResponseBytes: number;
  timeoutMs: number;
  cacheTtlMs: number;
  maxRedirects: number;
  readability: boolean;
  userAgent: string;
  ssrfPolicy: SsrfPolicy;
  dnsServers?: string[];
}

export const DEFAULT_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

export function fetchSettings(config: { tools?: unknown }): FetchSettings {
  const raw = (config.tools as { web?: WebFetchTools } | undefined)?.web?.fetch ?? {};
  const maxCharsCap = raw.maxCharsCap ?? 20_000;
  return {
    enabled: raw.enabled !== false,
    maxCharsCap,
    maxChars: Math.min(raw.maxChars ?? 20_000, maxCharsCap),
    maxResponseBytes: clamp(raw.maxResponseBytes ?? 750_000, 32_000, 10_000_000),
    timeoutMs: (raw.timeoutSeconds ?? 30) * 1000,
    cacheTtlMs: (raw.cacheTtlMinutes ?? 15) * 60_000,
    maxRedirects: raw.maxRedirects ?? 3,
    readability: raw.readability !== false,
    userAgent: raw.userAgent ?? DEFAULT_USER_AGENT,
    ssrfPolicy: raw.ssrfPolicy ?? {},
    ...(raw.dnsServers ? { dnsServers: raw.dnsServers } : {}),
  };
}
