/**
 * `${VAR}` substitution in config string values. `$${VAR}` stays literal as `${VAR}`.
 * A reference to an unset variable is an error naming the config path and the variable,
 * so a missing secret is caught at load time rather than sent as an empty string.
 */
import type { Env } from './paths.js';
import { formatPath, type PathSegment } from './path.js';
import { kernelIssue, type ConfigIssue } from '../plugin-host/resolve.js';

const REFERENCE = /\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function substituteEnv(value: unknown, env: Env, issues: ConfigIssue[], at: PathSegment[] = []): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    return value.replace(REFERENCE, (match: string, name: string) => {
      if (match.startsWith('$$')) return match.slice(1);
      const replacement = env[name];
      if (replacement === undefined) {
        issues.push(kernelIssue(formatPath(at), `references \${${name}}, which is not set in the environment`));
        // Keep the reference: an empty string would only add a second, misleading error.
        return match;
      }
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteEnv(item, env, issues, [...at, index]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = substituteEnv(item, env, issues, [...at, key]);
    return out;
  }
  return value;
}
