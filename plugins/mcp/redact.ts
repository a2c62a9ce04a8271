/**
 * What `claw mcp` and the mcp.* methods show of a server definition: launch lines and saved
 * definitions with credentials masked. A server's args, URL and headers often carry API keys
 * (`--api-key sk-…`, `https://user:pass@host`, `Authorization: Bearer …`), and these outputs
 * end up in terminals, scripts and the web UI.
 */

export const MASK = '***';

/** Flags whose next word (or `=value`) is a credential: exact names, then any flag ending in one of these words. */
const SECRET_FLAGS = new Set(['--token', '--secret', '--password', '--bearer', '--pat', '--auth', '--key']);
const SECRET_FLAG_SUFFIX =
  /^--(?:[a-z0-9]+[-_])*(?:token|secret|password|passwd|passphrase|api[-_]?key|apikey|access[-_]?key|private[-_]?key|client[-_]?key|credentials?)$/i;

/** Header and env names whose values are credentials (OpenClaw's list plus the usual suffixes). */
const SENSITIVE_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'api_key',
  'cookie',
]);
const SENSITIVE_NAME = /(?:^|[_-])(?:api[_-]?key|authorization|bearer|password|passwd|secret|token|credentials?)$/i;
/** Query parameters that carry credentials in a URL. */
const SENSITIVE_QUERY = /^(?:access[_-]?token|api[_-]?key|apikey|key|token|secret|password|auth|sig|signature|code)$/i;

const isSecretFlag = (flag: string) => SECRET_FLAGS.has(flag.toLowerCase()) || SECRET_FLAG_SUFFIX.test(flag);

export function isSensitiveName(name: string): boolean {
  return SENSITIVE_HEADERS.has(name.trim().toLowerCase()) || SENSITIVE_NAME.test(name.trim());
}

/** A value with a `${VAR}` reference (`Bearer ${DOCS_TOKEN}`) names where the secret lives, not the secret: shown as written. */
export const isEnvReference = (value: string) => /(?<!\$)\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(value);

/** URL userinfo and credential-looking query values masked; anything unparsable masked where it looks like userinfo. */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value.replace(/\/\/[^/@\s]+@/g, `//${MASK}@`);
  }
  if (!url.username && !url.password && ![...url.searchParams.keys()].some((key) => SENSITIVE_QUERY.test(key)))
    return value;
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  for (const key of [...url.searchParams.keys()]) if (SENSITIVE_QUERY.test(key)) url.searchParams.set(key, MASK);
  return url.toString().replaceAll(encodeURIComponent(MASK), MASK);
}

/** Same length as `args`: values of secret flags, `NAME=value` with a sensitive name, and URL credentials masked. */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext) {
      maskNext = false;
      out.push(MASK);
      continue;
    }
    const flag = /^(--[^=\s]+)(=.*)?$/s.exec(arg);
    if (flag && isSecretFlag(flag[1]!)) {
      if (flag[2] === undefined) maskNext = true;
      out.push(flag[2] === undefined ? arg : `${flag[1]}=${MASK}`);
      continue;
    }
    const assignment = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/s.exec(arg);
    if (assignment && isSensitiveName(assignment[1]!) && !isEnvReference(assignment[2]!)) {
      out.push(`${assignment[1]}=${MASK}`);
      continue;
    }
    out.push(/^[a-z][a-z0-9+.-]*:\/\//i.test(arg) ? redactUrl(arg) : arg);
  }
  return out;
}

/** Header values are masked unless they are `${VAR}` references; env values when their name is sensitive. */
function redactRecord(record: unknown, every: boolean): unknown {
  if (!record || typeof record !== 'object' || Array.isArray(record)) return record;
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key,
      typeof value === 'string' && !isEnvReference(value) && (every || isSensitiveName(key)) ? MASK : value,
    ]),
  );
}

/** A saved definition as `claw mcp list/show` and the web UI show it. */
export function redactServer(server: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...server };
  if (Array.isArray(server.args)) out.args = redactArgs(server.args.map(String));
  if (typeof server.url === 'string') out.url = redactUrl(server.url);
  if ('headers' in server) out.headers = redactRecord(server.headers, true);
  if ('env' in server) out.env = redactRecord(server.env, false);
  return out;
}
