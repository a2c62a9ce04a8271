/**
 * Network exposure: who can reach the gateway (bind), what they must present (auth), how
 * hard guessing is (secret length, rate limit), and which extra doors are open (browser
 * origins, the OpenAI-compatible HTTP API).
 */
import { isLoopbackHost } from '../../../../sdk/net/auth-kit.js';
import { section, type AuditContext, type Finding } from './types.js';

type AuthMode = 'none' | 'token' | 'password';

export interface GatewayExposure {
  bind: string;
  host: string;
  /** Reachable from other machines. */
  exposed: boolean;
  mode: AuthMode;
  token?: { value: string; source: string };
  password?: { value: string; source: string };
}

export const TOKEN_WARN_BELOW = 32;
const PASSWORD_WARN_BELOW = 24;
/** Below this, a secret on a network-reachable gateway is critical. */
const SECRET_CRITICAL_BELOW = 16;
/** More guesses than this per minute per client is no real brake on guessing. */
const MAX_ATTEMPTS_PER_MINUTE = 100;

const PLACEHOLDERS = new Set([
  '',
  'undefined',
  'null',
  'changeme',
  'change-me',
  'change_me',
  'replaceme',
  'replace-me',
  'your-token',
  'your_token',
  'yourtoken',
  'token',
  'secret',
  'password',
  'xxx',
  'todo',
]);

/** The config value wins over the environment, as in the gateway. */
function secretFrom(
  auth: Record<string, unknown>,
  kind: 'token' | 'password',
  env: AuditContext['env'],
): { value: string; source: string } | undefined {
  if (typeof auth[kind] === 'string') return { value: auth[kind], source: `gateway.auth.${kind}` };
  const envName = kind === 'token' ? 'OPENCLAW_GATEWAY_TOKEN' : 'OPENCLAW_GATEWAY_PASSWORD';
  const fromEnv = env[envName]?.trim();
  return fromEnv ? { value: fromEnv, source: envName } : undefined;
}

/** The gateway's effective bind and auth, resolved the way the gateway resolves them. */
export function gatewayExposure(ctx: AuditContext): GatewayExposure {
  const gateway = section(ctx.config.gateway);
  const auth = section(gateway.auth);
  const bind = typeof gateway.bind === 'string' ? gateway.bind : 'loopback';
  const host = bind === 'lan' ? '0.0.0.0' : bind === 'custom' ? String(gateway.customBindHost ?? '') : '127.0.0.1';
  const token = secretFrom(auth, 'token', ctx.env);
  const password = secretFrom(auth, 'password', ctx.env);
  // Unset means token auth: a gateway without a token generates one on its first start.
  const mode: AuthMode = ['none', 'token', 'password'].includes(auth.mode)
    ? auth.mode
    : token || !password
      ? 'token'
      : 'password';
  return { bind, host, exposed: !isLoopbackHost(host), mode, token, password };
}

function isPlaceholder(value: string): boolean {
  const plain = value
    .trim()
    .toLowerCase()
    .replace(/^[<"'[{(]+|[>"'\]})]+$/g, '');
  return PLACEHOLDERS.has(plain) || /^\$\{[A-Za-z0-9_]+\}$/.test(value.trim());
}

function where(exposure: GatewayExposure): string {
  return exposure.exposed
    ? `listens on ${exposure.host || '(gateway.customBindHost is not set)'} (gateway.bind "${exposure.bind}")`
    : 'listens on loopback only';
}

/**
 * A configured secret is checked even while another auth mode is active: it becomes the
 * credential the moment auth is switched to it. Only the live one can be critical.
 */
function secretChecks(exposure: GatewayExposure, kind: 'token' | 'password'): Finding[] {
  const secret = exposure[kind];
  if (!secret) return [];
  const active = exposure.mode === kind;
  const unused = active ? '' : ` (not in use now: gateway.auth.mode is "${exposure.mode}")`;
  const envName = kind === 'token' ? 'OPENCLAW_GATEWAY_TOKEN' : 'OPENCLAW_GATEWAY_PASSWORD';
  const keys = `gateway.auth.${kind} or ${envName}`;
  if (isPlaceholder(secret.value)) {
    return [
      {
        checkId: `gateway.${kind}_placeholder_value`,
        severity: active ? 'critical' : 'warn',
        title: `Gateway ${kind} is a placeholder`,
        detail: `${secret.source} is ${secret.value.trim() ? `"${secret.value.trim()}"` : 'blank'}: anyone who tries the obvious value gets in${unused}.`,
        fix: `Set ${keys} to a long random value, e.g. \`openssl rand -hex 24\`.`,
        fixable: false,
      },
    ];
  }
  const length = secret.value.trim().length;
  const warnBelow = kind === 'token' ? TOKEN_WARN_BELOW : PASSWORD_WARN_BELOW;
  if (length >= warnBelow) return [];
  const critical = active && exposure.exposed && length < SECRET_CRITICAL_BELOW;
  return [
    {
      checkId: `gateway.${kind}_too_short`,
      severity: critical ? 'critical' : 'warn',
      title: `Gateway ${kind} is short`,
      detail: `${secret.source} has ${length} characters (${warnBelow} or more recommended) and the gateway ${where(exposure)}${critical ? ': a short secret can be guessed over the network' : ''}${unused}.`,
      fix: `Set ${keys} to a random value of at least ${warnBelow} characters, e.g. \`openssl rand -hex 24\`.`,
      fixable: false,
    },
  ];
}

function authChecks(exposure: GatewayExposure): Finding[] {
  const secrets = [...secretChecks(exposure, 'token'), ...secretChecks(exposure, 'password')];
  if (exposure.mode !== 'none') return secrets;
  if (exposure.exposed) {
    return [
      ...secrets,
      {
        checkId: 'gateway.bind_no_auth',
        severity: 'critical',
        title: 'Gateway reachable from the network without auth',
        detail: `gateway.auth.mode is "none" and the gateway ${where(exposure)}: anyone who can reach the port controls the assistant (the gateway refuses to start like this).`,
        fix: 'Set gateway.auth.mode to "token" with gateway.auth.token (or OPENCLAW_GATEWAY_TOKEN), or set gateway.bind to "loopback".',
        fixable: false,
      },
    ];
  }
  return [
    ...secrets,
    {
      checkId: 'gateway.loopback_no_auth',
      severity: 'critical',
      title: 'Gateway has no auth',
      detail:
        'gateway.auth.mode is "none": every local process and user, and anything that forwards or reverse-proxies to the port, controls the assistant.',
      fix: 'Set gateway.auth.mode to "token" with gateway.auth.token (or OPENCLAW_GATEWAY_TOKEN); a fresh gateway generates a token when auth.mode is unset.',
      fixable: false,
    },
  ];
}

function rateLimitCheck(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  if (!exposure.exposed || exposure.mode === 'none') return [];
  const gateway = section(ctx.config.gateway);
  const setting = section(gateway.auth).rateLimit;
  if (setting === undefined) return [];
  const limit = section(setting);
  const maxAttempts = typeof limit.maxAttempts === 'number' ? limit.maxAttempts : 10;
  const windowMs = typeof limit.windowMs === 'number' && limit.windowMs > 0 ? limit.windowMs : 60_000;
  const perMinute = (maxAttempts * 60_000) / windowMs;
  let problem: string | undefined;
  if (setting === false || limit.enabled === false || maxAttempts <= 0) problem = 'is turned off';
  else if (perMinute > MAX_ATTEMPTS_PER_MINUTE) problem = `allows ${Math.round(perMinute)} failed attempts a minute`;
  if (!problem) return [];
  return [
    {
      checkId: 'gateway.auth_no_rate_limit',
      severity: 'warn',
      title: 'No brake on guessing the gateway secret',
      detail: `gateway.auth.rateLimit ${problem} while the gateway ${where(exposure)}: a client on the network may guess the ${exposure.mode} as fast as it likes.`,
      fix: 'Remove gateway.auth.rateLimit for the defaults (10 attempts a minute, then a 5-minute lockout) or lower its maxAttempts.',
      fixable: false,
    },
  ];
}

function exposureNote(exposure: GatewayExposure): Finding[] {
  if (!exposure.exposed || exposure.mode === 'none') return [];
  const everywhere = exposure.host === '0.0.0.0' || exposure.host === '::' || exposure.host === '';
  return [
    {
      checkId: 'gateway.bind_non_loopback',
      severity: everywhere ? 'warn' : 'info',
      title: everywhere ? 'Gateway listens on every network interface' : 'Gateway listens beyond loopback',
      detail: `The gateway ${where(exposure)}; the ${exposure.mode} is all that stands between the network and the assistant.`,
      fix: 'Set gateway.bind to "loopback" unless other machines must connect; prefer a specific address (gateway.bind "custom" + gateway.customBindHost) over "lan".',
      fixable: false,
    },
  ];
}

function originsCheck(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  const gateway = section(ctx.config.gateway);
  const configured = section(gateway.controlUi).allowedOrigins;
  // gateway.controlUi.allowedOrigins, and gateway.allowedOrigins where earlier configs put it.
  const lists: Array<[string, unknown]> = [
    ['gateway.controlUi.allowedOrigins', configured],
    ['gateway.allowedOrigins', gateway.allowedOrigins],
  ];
  const open = exposure.mode === 'none';
  const findings: Finding[] = lists
    .filter(([, origins]) => Array.isArray(origins) && origins.includes('*'))
    .map(([key]) => ({
      checkId: 'gateway.control_ui.allowed_origins_wildcard',
      // OpenClaw: critical once the gateway is reachable from the network.
      severity: open || exposure.exposed ? 'critical' : 'warn',
      title: 'Any website may open a WebSocket to the gateway',
      detail:
        `${key} contains "*": a page from any site, open in the user's browser, can connect to the gateway` +
        (open ? ' and, with auth "none", drive the assistant' : ' and try the shared secret') +
        (exposure.exposed ? `; the gateway ${where(exposure)}.` : '.'),
      fix: `Replace "*" in ${key} with the exact origins that need access (e.g. "https://dashboard.example").`,
      fixable: false,
    }));
  const listed = Array.isArray(configured)
    ? configured.filter((origin) => typeof origin === 'string' && origin.trim() !== '')
    : [];
  if (exposure.exposed && listed.length === 0) {
    findings.push({
      checkId: 'gateway.control_ui.allowed_origins_required',
      severity: 'critical',
      title: 'Network-facing gateway without a list of allowed browser origins',
      detail:
        `The gateway ${where(exposure)} and gateway.controlUi.allowedOrigins is empty: a browser request then passes whenever its ` +
        `Origin matches the Host it was sent to, so a page served under any address or name the gateway answers to (every interface, ` +
        `gateway.allowedHosts) counts as the gateway's own.`,
      fix:
        'Set gateway.controlUi.allowedOrigins to the full origins the web UI is opened from (e.g. ' +
        '["https://claw.example.lan:18789"]), or gateway.bind "loopback".',
      fixable: false,
    });
  }
  return findings;
}

/** With auth "none" the HTTP side is as open as the WebSocket: no credential on any route. */
function httpNoAuthCheck(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  if (exposure.mode !== 'none') return [];
  const chat = section(section(section(section(ctx.config.gateway).http).endpoints).chatCompletions).enabled === true;
  const routes = ['/v1/models', ...(chat ? ['/v1/chat/completions'] : [])];
  return [
    {
      checkId: 'gateway.http.no_auth',
      severity: exposure.exposed ? 'critical' : 'warn',
      title: 'Gateway HTTP API answers without credentials',
      detail:
        `gateway.auth.mode is "none": ${routes.join(', ')} ${routes.length > 1 ? 'answer' : 'answers'} any caller that reaches the ` +
        `gateway, which ${where(exposure)}.`,
      fix: 'Set gateway.auth.mode to "token" (a fresh gateway generates one), and keep gateway.bind "loopback" if auth must stay off.',
      fixable: false,
    },
  ];
}

/** /v1/chat/completions honours x-openclaw-session-key: API callers pick the session they write to. */
function sessionKeyOverrideCheck(ctx: AuditContext): Finding[] {
  const chat = section(section(section(section(ctx.config.gateway).http).endpoints).chatCompletions).enabled === true;
  if (!chat) return [];
  return [
    {
      checkId: 'gateway.http.session_key_override_enabled',
      severity: 'info',
      title: 'HTTP API callers choose the session',
      detail:
        '/v1/chat/completions accepts an x-openclaw-session-key header, so whoever holds the gateway credential can write into any ' +
        'session, including ones people chat in.',
      fix:
        'Treat holders of the gateway credential as the operator; turn gateway.http.endpoints.chatCompletions.enabled off when no ' +
        'OpenAI client needs it.',
      fixable: false,
    },
  ];
}

function chatCompletionsCheck(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  const endpoint = section(section(section(section(ctx.config.gateway).http).endpoints).chatCompletions);
  if (endpoint.enabled !== true) return [];
  const open = exposure.mode === 'none';
  return [
    {
      checkId: 'gateway.http.chat_completions_enabled',
      severity: open ? 'critical' : 'warn',
      title: 'OpenAI-compatible HTTP API is on',
      detail: `gateway.http.endpoints.chatCompletions.enabled is true: POST /v1/chat/completions runs full agent turns (with the agent's tools) for any caller ${open ? 'without any credential (auth mode "none")' : `holding the gateway ${exposure.mode}`}.`,
      fix: 'Set gateway.http.endpoints.chatCompletions.enabled to false unless an OpenAI client needs it.',
      fixable: false,
    },
  ];
}

function passwordInConfig(ctx: AuditContext, exposure: GatewayExposure): Finding[] {
  const written = section(section(ctx.raw.gateway).auth).password;
  // A `${VAR}` reference keeps the secret out of the file; anything else is the secret itself.
  if (typeof written !== 'string' || /\$\{[A-Za-z0-9_]+\}/.test(written)) return [];
  const inUse = exposure.mode === 'password';
  return [
    {
      checkId: 'config.secrets.gateway_password_in_config',
      severity: inUse ? 'warn' : 'info',
      title: 'Gateway password stored in the config file',
      detail: `gateway.auth.password is written in ${ctx.configPath} in plain text${inUse ? '' : ' (not in use: auth mode is not "password")'}; backups and copies of the file carry it.`,
      fix: 'Move it to the environment: OPENCLAW_GATEWAY_PASSWORD, or "${OPENCLAW_GATEWAY_PASSWORD}" as the config value.',
      fixable: false,
    },
  ];
}

export function gatewayChecks(ctx: AuditContext): Finding[] {
  const exposure = gatewayExposure(ctx);
  return [
    ...authChecks(exposure),
    ...rateLimitCheck(ctx, exposure),
    ...exposureNote(exposure),
    ...originsCheck(ctx, exposure),
    ...chatCompletionsCheck(ctx, exposure),
    ...httpNoAuthCheck(ctx, exposure),
    ...sessionKeyOverrideCheck(ctx),
    ...passwordInConfig(ctx, exposure),
  ];
}
