/**
 * `${VAR}` substitution in config string values (`$${VAR}` stays literal as `${VAR}`). As in
 * OpenClaw, an unset variable is a warning naming the path and the variable, and the setting
 * is left out, so what uses it is unavailable rather than sent the literal text.
 */
import type { Env } from './paths.js';
import { formatPath, type PathSegment } from './path.js';
import { kernelIssue, type ConfigIssue } from '../plugin-host/resolve.js';

const REFERENCE = /\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const UNSET = Symbol('a string naming an unset variable');

export function substituteEnv(value: unknown, env: Env, issues: ConfigIssue[], at: PathSegment[] = []): unknown {
  if (typeof value === 'string') {
    const before = issues.length;
    const replaced = value.replace(REFERENCE, (match: string, name: string) => {
      if (match.startsWith('$$')) return match.slice(1);
      if (env[name] !== undefined) return env[name];
      const message = `references \${${name}}, which is not set in the environment; left out, so what uses it is unavailable until ${name} is set`;
      issues.push(kernelIssue(formatPath(at), message, 'warning'));
      return match;
    });
    return issues.length > before ? UNSET : replaced;
  }
  const walk = (item: unknown, key: PathSegment) => substituteEnv(item, env, issues, [...at, key]);
  if (Array.isArray(value)) return value.map(walk).filter((item) => item !== UNSET);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => [key, walk(item, key)] as const);
    return Object.fromEntries(entries.filter(([, item]) => item !== UNSET));
  }
  return value;
}
