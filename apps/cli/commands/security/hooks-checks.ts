/**
 * Webhook ingress (`hooks`, the hooks plugin): whoever holds hooks.token can start agent
 * runs. Its token must be its own and long.
 */
import { gatewayExposure, TOKEN_WARN_BELOW, type GatewayExposure } from './gateway-checks.js';
import { section, type AuditContext, type Finding } from './types.js';

const ENV_REFERENCE = /\$\{[A-Za-z0-9_]+\}/;

/** Checked whether or not the endpoints are on: the token is written down either way. */
function tokenChecks(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  const hooks = section(ctx.config.hooks);
  const token = typeof hooks.token === 'string' ? hooks.token.trim() : '';
  if (!token) return [];
  const findings: Finding[] = [];
  if (token === exposure.token?.value.trim() || token === exposure.password?.value.trim()) {
    findings.push({
      checkId: 'hooks.token_reuse_gateway_token',
      severity: 'critical',
      title: 'The webhook token is the gateway secret',
      detail: `hooks.token equals ${token === exposure.token?.value.trim() ? exposure.token!.source : exposure.password!.source}: ` +
        `whoever holds it for webhooks can also operate the whole gateway. The webhook endpoints refuse to serve until it differs.`,
      fix: 'Give hooks.token its own long random value (openssl rand -base64 32) and update the senders.',
      fixable: false,
    });
  }
  if (token.length < TOKEN_WARN_BELOW) {
    findings.push({
      checkId: 'hooks.token_too_short',
      severity: 'warn',
      title: 'Short webhook token',
      detail: `hooks.token has ${token.length} characters; webhook callers can guess 20 times a minute.`,
      fix: `Use at least ${TOKEN_WARN_BELOW} random characters.`,
      fixable: false,
    });
  }
  const written = section(ctx.raw.hooks).token;
  if (typeof written === 'string' && !ENV_REFERENCE.test(written)) {
    findings.push({
      checkId: 'config.secrets.hooks_token_in_config',
      severity: 'warn',
      title: 'Webhook token stored in the config file',
      detail: `hooks.token is written in ${ctx.configPath} in plain text; backups and copies of the file carry it.`,
      fix: 'Reference an environment variable instead: "${CLAW_HOOKS_TOKEN}" as the config value.',
      fixable: false,
    });
  }
  return findings;
}

export function hooksChecks(ctx: AuditContext): Finding[] {
  const exposure = gatewayExposure(ctx);
  return tokenChecks(ctx, exposure);
}
