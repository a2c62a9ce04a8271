/**
 * Every check the audit runs, one entry per area. Each area is a small module that reads
 * the audit context (and the shared facts in facts.ts) and returns findings with
 * OpenClaw's checkIds; adding an area is adding a line here.
 */
import { channelChecks } from './channel-checks.js';
import { execChecks } from './exec-checks.js';
import { fsChecks, scanState } from './fs-checks.js';
import { gatewayChecks } from './gateway-checks.js';
import { hooksChecks } from './hooks-checks.js';
import { pluginChecks } from './plugin-checks.js';
import type { AuditContext, Finding } from './types.js';

export interface AuditCheck {
  /** What the area covers, for people reading the registry. */
  area: string;
  run: (ctx: AuditContext) => Finding[];
}

export const AUDIT_CHECKS: readonly AuditCheck[] = [
  { area: 'gateway: bind, auth, origins, HTTP API', run: gatewayChecks },
  { area: 'hooks: webhook token', run: hooksChecks },
  { area: 'channels: DM and group policies', run: channelChecks },
  { area: 'fs: state dir and config permissions', run: (ctx) => fsChecks(ctx, scanState(ctx)) },
  { area: 'plugins: allowlist, provenance', run: pluginChecks },
  { area: 'tools.exec: host exec policy', run: execChecks },
];

export function runChecks(ctx: AuditContext): Finding[] {
  return AUDIT_CHECKS.flatMap((check) => check.run(ctx));
}
