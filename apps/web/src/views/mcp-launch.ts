/**
 * An MCP server's launch line for the MCP page, from its config entry as config.get returns it
 * (secret-named keys already redacted there): a URL loses its user info and credential-looking
 * query values; a stdio command's credential-looking arguments (`--token x`, `--api-key=x`)
 * are masked, as `claw mcp status` masks them.
 */
export interface ServerConfig {
  enabled?: boolean;
  command?: string;
  args?: string[];
  env?: Record<string, unknown>;
  cwd?: string;
  workingDirectory?: string;
  url?: string;
  transport?: string;
  type?: string;
  headers?: Record<string, unknown>;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  toolFilter?: { include?: string[]; exclude?: string[] };
  supportsParallelToolCalls?: boolean;
  codex?: { defaultToolsApprovalMode?: string };
}

const REDACTED = '__REDACTED__';
const MASK = '***';
/** A flag whose value is a credential: `--token`, `--api-key`, `-password`, `--auth`, … */
const SECRET_FLAG = /^--?[\w-]*(token|api[-_]?key|password|passwd|secret|credentials?|cookie|authorization|auth)$/i;

/** A URL without user info, and with credential-looking query values masked. */
export function safeUrl(raw: string): string {
  if (raw === REDACTED) return MASK;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.replace(/\/\/[^/@]*@/, `//${MASK}@`);
  }
  if (url.username || url.password) {
    url.username = MASK;
    url.password = '';
  }
  for (const key of [...url.searchParams.keys()]) {
    if (SECRET_FLAG.test(`--${key}`) || /key$/i.test(key)) url.searchParams.set(key, MASK);
  }
  return url.toString();
}

export function safeArgs(args: string[]): string[] {
  return args.map((arg, index) => {
    if (arg === REDACTED) return MASK;
    const equals = arg.indexOf('=');
    if (arg.startsWith('-') && equals > 0 && SECRET_FLAG.test(arg.slice(0, equals)))
      return `${arg.slice(0, equals)}=${MASK}`;
    if (index > 0 && SECRET_FLAG.test(args[index - 1]!) && !args[index - 1]!.includes('=')) return MASK;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(arg) ? safeUrl(arg) : arg;
  });
}

/** How OpenClaw names a server's transport: a url is SSE unless it says otherwise. */
export function transportOf(server: ServerConfig): string {
  if (server.url) return server.transport ?? (server.type === 'http' ? 'streamable-http' : 'sse');
  return 'stdio';
}

export function launchOf(server: ServerConfig): string {
  if (server.url) return `${transportOf(server)} ${safeUrl(server.url)}`;
  return [server.command ?? '(no command)', ...safeArgs(server.args ?? [])].join(' ');
}
