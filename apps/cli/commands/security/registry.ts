/**
 * Every check the audit runs, one entry per area. Each area is a small module that reads
 * the audit context (and the shared facts in facts.ts) and returns findings with
 * OpenClaw's checkIds; adding an area is adding a line here.
 */
import { browserChecks } from './browser-checks.js';
import { channelChecks } from './channel-checks.js';
import { elevatedChecks } from './elevated-checks.js';
import { execAllowlistChecks } from './exec-allowlist-checks.js';
import { execChecks } from './exec-checks.js';
import { exposureChecks } from './exposure-checks.js';
import { flagChecks } from './flag-checks.js';
import { fsChecks, scanState } from './fs-checks.js';
import { gatewayChecks } from './gateway-checks.js';
import { hooksChecks } from './hooks-checks.js';
import { modelChecks } from './model-checks.js';
import { pluginChecks } from './plugin-checks.js';
import { sandboxChecks } from './sandbox-checks.js';
import { trustChecks } from './trust-checks.js';
import type { AuditContext, Finding } from './types.js';

export interface AuditCheck {
  /** What the area covers, for people reading the registry. */
  area: string;
  run: (ctx: AuditContext) => Finding[];
}

export const AUDIT_CHECKS: readonly AuditCheck[] = [
  { area: 'gateway: bind, auth, origins, HTTP API', run: gatewayChecks },
  { area: 'hooks: webhook token and routing', run: hooksChecks },
  { area: 'channels: DM and group policies', run: channelChecks },
  { area: 'security.exposure: open chats × agent tools', run: exposureChecks },
  { area: 'security.trust_model: shared use, cross-agent sessions', run: trustChecks },
  { area: 'tools.elevated: who may leave the sandbox', run: elevatedChecks },
  { area: 'tools.exec: host exec policy', run: execChecks },
  { area: 'tools.exec: safe bins and the approvals allowlist', run: execAllowlistChecks },
  { area: 'config: break-glass flags', run: flagChecks },
  { area: 'sandbox: mounts, network, unused settings', run: sandboxChecks },
  { area: 'browser: control auth', run: browserChecks },
  { area: 'models: legacy, weak and small models', run: modelChecks },
  { area: 'fs: state dir and config permissions', run: (ctx) => fsChecks(ctx, scanState(ctx)) },
  { area: 'plugins: allowlist, provenance, reachable tools', run: pluginChecks },
];

export function runChecks(ctx: AuditContext): Finding[] {
  return AUDIT_CHECKS.flatMap((check) => check.run(ctx));
}
