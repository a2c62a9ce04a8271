/**
 * Browser control: the browser plugin drives a real Chromium (logged-in profiles, cookies)
 * through gateway methods, so it is exactly as protected as the gateway's auth. A gateway
 * with auth unset generates a token on its first start; only "none" leaves it open.
 */
import { gatewayExposure } from './gateway-checks.js';
import { section, type AuditContext, type Finding } from './types.js';

export function browserChecks(ctx: AuditContext): Finding[] {
  const plugin = ctx.plugins.find((record) => record.enabled && record.manifest?.tools?.includes('browser'));
  if (!plugin || section(ctx.config.browser).enabled === false) return [];
  const exposure = gatewayExposure(ctx);
  if (exposure.mode !== 'none') return [];
  return [
    {
      checkId: 'browser.control_no_auth',
      severity: 'critical',
      title: 'Browser control without auth',
      detail:
        `gateway.auth.mode is "none" and the browser plugin (${plugin.id}) is on: any local process, or any request forged towards ` +
        `the gateway's port, can drive the browser with its profiles, cookies and sessions.`,
      fix: 'Set gateway.auth.mode to "token" (a fresh gateway generates one), or set browser.enabled to false.',
      fixable: false,
    },
  ];
}
