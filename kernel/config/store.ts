/**
 * openclaw.json as the kernel reads it: JSON5, env-substituted, checked against the kernel schema.
 * Writers edit the raw form (`${VAR}` references intact); the kernel runs with the resolved one.
 */
import { readFileSync } from 'node:fs';
import { KERNEL_CONFIG_SCHEMA } from '../generated/schemas.js';
import { parseJson5 } from '../util/json5.js';
import { validateWith } from '../validation.js';
import { substituteEnv } from './env-subst.js';
import type { Env } from './paths.js';
import type { KernelConfig } from '../generated/types.js';
import type { KernelPolicy } from '../policy.js';
import { kernelIssue, type ConfigIssue } from '../plugin-host/resolve.js';

export interface ConfigSnapshot {
  path: string;
  exists: boolean;
  /** As written, `${VAR}` references intact. Edit this, then write it. */
  raw: Record<string, unknown>;
  /** With env references substituted: what the kernel runs with. */
  resolved: KernelConfig;
  /** Problems reading the file or substituting env vars, and kernel-schema violations. */
  issues: ConfigIssue[];
}

/** Thrown when config problems stop the kernel from booting; lists every problem. */
export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  override name = 'ConfigError';
  constructor(
    readonly path: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(`invalid config ${path}:\n${issues.map((issue) => `  ${formatIssue(issue)}`).join('\n')}`);
  }
}

export function formatIssue(issue: ConfigIssue): string {
  const owner = issue.owner === 'kernel' ? '' : ` (plugin ${issue.owner})`;
  return `${issue.path}: ${issue.message}${owner}`;
}

export function readConfigFile(path: string, env: Env = process.env): ConfigSnapshot {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return snapshotOf({}, path, env, false);
    return broken(path, `cannot read the config file: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = text.trim() === '' ? {} : parseJson5(text, path);
  } catch (error) {
    return broken(path, (error as Error).message);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return broken(path, 'the config file must contain a JSON5 object');
  }
  return snapshotOf(data as Record<string, unknown>, path, env, true);
}

export function snapshotOf(
  raw: Record<string, unknown>,
  path: string,
  env: Env = process.env,
  exists = false,
): ConfigSnapshot {
  const issues: ConfigIssue[] = [];
  const resolved = substituteEnv(raw, env, issues) as KernelConfig;
  for (const issue of validateWith(KERNEL_CONFIG_SCHEMA, structuredClone(resolved)))
    issues.push(kernelIssue(issue.path, issue.message));
  return { path, exists, raw, resolved, issues };
}

/** `snapshot` as the policy judges it: unknown keys it tolerates, problems beyond the schema. */
export function judged(
  snapshot: ConfigSnapshot,
  policy: Pick<KernelPolicy, 'configIssues' | 'tolerate' | 'derive'>,
): ConfigSnapshot {
  const resolved = policy.derive?.(snapshot.resolved) ?? snapshot.resolved;
  const more = policy.configIssues(resolved).map((issue) => kernelIssue(issue.path, issue.message));
  return { ...snapshot, resolved, issues: [...snapshot.issues.map((issue) => policy.tolerate(issue)), ...more] };
}

function broken(path: string, message: string): ConfigSnapshot {
  return { path, exists: true, raw: {}, resolved: {}, issues: [kernelIssue('<file>', message)] };
}

/**
 * Config the plugin host can safely reason about: top-level kernel sections with schema
 * errors are dropped (defaults apply), so one typo does not hide every plugin's status.
 */
export function usableConfig(snapshot: ConfigSnapshot): KernelConfig {
  const broken = new Set(
    snapshot.issues.filter((issue) => issue.level === 'error').map((issue) => issue.path.split(/[.[]/)[0]!),
  );
  if (broken.size === 0) return snapshot.resolved;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(snapshot.resolved)) if (!broken.has(key)) out[key] = value;
  return out as KernelConfig;
}
