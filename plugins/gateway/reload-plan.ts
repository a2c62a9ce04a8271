/**
 * What a config change needs to take effect (`gateway.reload`, as OpenClaw plans it): the
 * changed paths, each matched against rules. Settings the running code reads afresh on
 * every use — channel access policy, models and providers, the default model, tool policy,
 * bindings — apply in place ("hot"); a few paths change nothing at run time ("none");
 * every other path, and any path no rule names, needs a gateway restart.
 */
import { formatPath, type PathSegment, type ReloadResult } from '../../sdk/index.js';

export type ReloadMode = ReloadResult['mode'];
const RELOAD_MODES: readonly ReloadMode[] = ['off', 'hot', 'restart', 'hybrid'];
export type ReloadKind = 'hot' | 'restart' | 'none';

const CHANNEL_POLICY_KEYS = [
  'dmPolicy',
  'allowFrom',
  'groupPolicy',
  'groupAllowFrom',
  'groups',
  'historyLimit',
  'textChunkLimit',
  'retry',
];

/** Most specific first; `*` matches any one segment; a rule covers everything below it. */
const RULES: ReadonlyArray<[pattern: readonly string[], kind: ReloadKind]> = [
  [['gateway', 'reload'], 'none'],
  // The node command policy reads gateway.nodes for every invoke and every connect.
  [['gateway', 'nodes'], 'hot'],
  // POST /tools/invoke reads gateway.tools for every call.
  [['gateway', 'tools'], 'hot'],
  [['meta'], 'none'],
  [['$schema'], 'none'],
  ...CHANNEL_POLICY_KEYS.flatMap((key): Array<[string[], ReloadKind]> => [
    [['channels', '*', key], 'hot'],
    [['channels', '*', 'accounts', '*', key], 'hot'],
  ]),
  // The nested spelling (`dm.policy`, Matrix's own) is read per message too.
  ...['policy', 'allowFrom', 'enabled'].flatMap((key): Array<[string[], ReloadKind]> => [
    [['channels', '*', 'dm', key], 'hot'],
    [['channels', '*', 'accounts', '*', 'dm', key], 'hot'],
  ]),
  [['models'], 'hot'],
  [['agents', 'defaults', 'model'], 'hot'],
  [['agents', 'defaults', 'models'], 'hot'],
  [['tools'], 'hot'],
  [['bindings'], 'hot'],
  // The skills plugin reads its section afresh for every snapshot.
  [['skills'], 'hot'],
  // The hooks plugin reads the section on every request and event.
  [['hooks'], 'hot'],
  // The mcp plugin reads mcp.servers on every use and retires a server whose definition changed.
  [['mcp'], 'hot'],
];

export function reloadKind(path: readonly PathSegment[]): ReloadKind {
  for (const [pattern, kind] of RULES) {
    if (
      pattern.length <= path.length &&
      pattern.every((segment, index) => segment === '*' || segment === String(path[index]))
    )
      return kind;
  }
  return 'restart';
}

/** `gateway.reload.mode` of a config (default hybrid). */
export function reloadMode(config: Record<string, unknown>): ReloadMode {
  const mode = ((config.gateway as { reload?: { mode?: unknown } } | undefined)?.reload?.mode ??
    'hybrid') as ReloadMode;
  return RELOAD_MODES.includes(mode) ? mode : 'hybrid';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Leaf paths whose values differ (objects are walked; arrays and scalars compare whole). */
export function changedPaths(before: unknown, after: unknown, at: PathSegment[] = []): PathSegment[][] {
  if (isObject(before) || isObject(after)) {
    if (!isObject(before) || !isObject(after)) {
      // An object appeared or went away: its leaves are what changed.
      const side = isObject(before) ? before : (after as Record<string, unknown>);
      const leaves = Object.keys(side).flatMap((key) =>
        changedPaths(isObject(before) ? before[key] : undefined, isObject(after) ? after[key] : undefined, [
          ...at,
          key,
        ]),
      );
      return leaves.length > 0 || at.length === 0 ? leaves : [at];
    }
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) => changedPaths(before[key], after[key], [...at, key]));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [at];
}

export interface ReloadPlan {
  changedPaths: string[];
  hot: PathSegment[][];
  restart: PathSegment[][];
  none: PathSegment[][];
}

export function planReload(before: Record<string, unknown>, after: Record<string, unknown>): ReloadPlan {
  const plan: ReloadPlan = { changedPaths: [], hot: [], restart: [], none: [] };
  for (const path of changedPaths(before, after)) {
    plan.changedPaths.push(formatPath(path));
    plan[reloadKind(path)].push(path);
  }
  return plan;
}

export function reloadMessage(result: Omit<ReloadResult, 'message'>): string {
  const list = (paths: string[]) =>
    paths.length > 3 ? `${paths.slice(0, 3).join(', ')} and ${paths.length - 3} more` : paths.join(', ');
  if (result.restartScheduled) return `The gateway is restarting to apply ${list(result.restartPaths)}.`;
  if (result.restartRequired) {
    const why = result.mode === 'off' ? ' (gateway.reload.mode is "off")' : '';
    return `Restart the gateway to apply ${list(result.restartPaths)}${why}.${result.hotPaths.length > 0 ? ` Applied without a restart: ${list(result.hotPaths)}.` : ''}`;
  }
  if (result.hotPaths.length > 0) return 'Applied to the running gateway without a restart.';
  return 'No gateway restart needed.';
}
