/**
 * A saved server definition as the registry commands show it without connecting: its
 * transport, a launch line with credentials masked, effective timeouts, and why it cannot run
 * when it cannot. Resolution is the runtime's (config.ts), so status says what would start.
 */
import { resolveServer, type McpServerConfig, type ResolvedServer } from './config.js';
import { redactArgs, redactUrl } from './redact.js';
import type { ServerDef } from './registry-config.js';

/** `command args (cwd=…)` or `<transport> <url>`, masked. */
export function describeResolved(server: ResolvedServer): string {
  if (server.transport !== 'stdio') return `${server.transport} ${redactUrl(server.url)}`;
  const args = redactArgs(server.args);
  return `${server.command}${args.length ? ` ${args.join(' ')}` : ''}${server.cwd ? ` (cwd=${server.cwd})` : ''}`;
}

/** The resolved server, or why the definition cannot start. */
export function tryResolve(name: string, server: ServerDef): ResolvedServer | { error: string } {
  try {
    const resolved = resolveServer(name, server as McpServerConfig);
    if (resolved.transport !== 'stdio') {
      let url: URL;
      try {
        url = new URL(resolved.url);
      } catch {
        return { error: `its url is not a valid URL: ${redactUrl(resolved.url)}` };
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { error: `only http and https URLs are supported, not ${url.protocol}` };
    }
    return resolved;
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The launch line of a definition, or `invalid: <why>`. */
export function launchLine(name: string, server: ServerDef): string {
  const resolved = tryResolve(name, server);
  return 'error' in resolved ? `invalid: ${resolved.error}` : describeResolved(resolved);
}
