/** What every audit check works from and what it produces. */
import type { PluginRecord } from '../../../../kernel/index.js';

export type Severity = 'critical' | 'warn' | 'info';

/** One finding, in OpenClaw's shape: `checkId` names the check, `fix` the key or command. */
export interface Finding {
  checkId: string;
  severity: Severity;
  title: string;
  detail: string;
  fix: string;
  /** `claw security audit --fix` can remedy it without a decision from the user. */
  fixable: boolean;
}

export type AnyRecord = Record<string, any>;

export interface AuditContext {
  /** The config with `${VAR}` references substituted: what the gateway would run with. */
  config: AnyRecord;
  /** The config as written. */
  raw: AnyRecord;
  env: Readonly<Record<string, string | undefined>>;
  stateDir: string;
  configPath: string;
  /** The default agent's workspace (kernel paths). */
  workspaceDir: string;
  plugins: readonly PluginRecord[];
}

export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'warn', 'info'];

/** A plain object at `value`, or an empty one: config sections may be missing or mistyped. */
export function section(value: unknown): AnyRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as AnyRecord) : {};
}
