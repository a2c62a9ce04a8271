/**
 * Webhook ingress (`hooks`, the hooks plugin): whoever holds hooks.token can start agent
 * runs. Its token must be its own and long; once the endpoints are on (hooks.enabled), the
 * agents and sessions a caller may reach should be pinned. Those become critical when the
 * gateway listens beyond loopback, as in OpenClaw.
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
      detail:
        `hooks.token equals ${token === exposure.token?.value.trim() ? exposure.token!.source : exposure.password!.source}: ` +
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

/** Which agents and sessions an authenticated webhook caller can reach. */
function routingChecks(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  const hooks = section(ctx.config.hooks);
  if (hooks.enabled !== true) return [];
  const remote = exposure.exposed ? 'critical' : 'warn';
  const where = exposure.exposed
    ? ` The gateway listens on ${exposure.host || 'a non-loopback address'}, so any caller on the network with the token can do this.`
    : '';
  const findings: Finding[] = [];
  if (typeof hooks.defaultSessionKey !== 'string' || hooks.defaultSessionKey.trim() === '') {
    findings.push({
      checkId: 'hooks.default_session_key_unset',
      severity: 'warn',
      title: 'Webhook runs land in a new session each time',
      detail:
        'hooks.defaultSessionKey is not set: every /hooks/agent call without a session key starts a fresh hook:<uuid> session, so ' +
        'webhook traffic is scattered over sessions nobody watches.',
      fix: 'Set hooks.defaultSessionKey, e.g. "hook:ingress".',
      fixable: false,
    });
  }
  const agents = hooks.allowedAgentIds;
  if (!Array.isArray(agents) || agents.some((id) => String(id).trim() === '*')) {
    findings.push({
      checkId: 'hooks.allowed_agent_ids_unrestricted',
      severity: remote,
      title: 'Webhooks may run any agent',
      detail:
        `hooks.allowedAgentIds ${Array.isArray(agents) ? 'contains "*"' : 'is not set'}: a webhook caller may pick any agent by ` +
        `id, and reaches the default agent when it names none.${where}`,
      fix: 'Set hooks.allowedAgentIds to the agents webhooks are for, e.g. ["hooks"], or [] to refuse agent runs from webhooks.',
      fixable: false,
    });
  }
  if (hooks.allowRequestSessionKey === true) {
    findings.push({
      checkId: 'hooks.request_session_key_enabled',
      severity: remote,
      title: 'Webhook callers choose the session',
      detail:
        `hooks.allowRequestSessionKey is true: a /hooks/agent caller may name the session its message goes to, including ones ` +
        `people chat in.${where}`,
      fix: 'Set hooks.allowRequestSessionKey to false, or limit it with hooks.allowedSessionKeyPrefixes.',
      fixable: false,
    });
    const listed: unknown[] = Array.isArray(hooks.allowedSessionKeyPrefixes) ? hooks.allowedSessionKeyPrefixes : [];
    const prefixes = listed.filter((prefix) => String(prefix).trim() !== '');
    if (prefixes.length === 0) {
      findings.push({
        checkId: 'hooks.request_session_key_prefixes_missing',
        severity: remote,
        title: 'Any session key is accepted from webhook callers',
        detail:
          `hooks.allowRequestSessionKey is true and hooks.allowedSessionKeyPrefixes is empty: nothing bounds which session a ` +
          `webhook caller writes into.${where}`,
        fix: 'Set hooks.allowedSessionKeyPrefixes, e.g. ["hook:"], or turn hooks.allowRequestSessionKey off.',
        fixable: false,
      });
    }
  }
  return findings;
}

export function hooksChecks(ctx: AuditContext): Finding[] {
  const exposure = gatewayExposure(ctx);
  return [...tokenChecks(ctx, exposure), ...routingChecks(ctx, exposure)];
}
