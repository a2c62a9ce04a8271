/**
 * Config checks no JSON Schema can express, as claw's policy runs them on every config the
 * kernel reads (host/policy.ts): regexes that must compile, agent ids that must be unique and
 * exist. And OpenClaw's own keys: OpenClaw refuses unknown config keys, and so does claw,
 * except keys OpenClaw documents — an openclaw.json brought over must start claw. Those are
 * warned about and unused (`claw doctor`).
 */
import type { KernelConfig } from '../kernel/index.js';
import { OPENCLAW_CONFIG_TREE } from '../sdk/generated/openclaw-keys.js';
import { redactPatternIssues } from './redact.js';
import { parseSandboxUser } from './sandbox-user.js';

type Tree = { [key: string]: Tree };
let tree: Tree | undefined;
export const IGNORED_OPENCLAW_KEY = 'is an OpenClaw setting claw does not implement; ignored';

/** Ids and array items match `*`; below the top level, an id the docs wrote as an example (`main`) matches any. */
export function isOpenclawKey(path: string): boolean {
  const segments = path.replace(/\[\d+\]/g, '.*').split('.');
  const walk = (node: Tree, at: number): boolean => {
    const exact = [segments[at]!, '*'].filter((key) => Object.hasOwn(node, key)).map((key) => node[key]!);
    const last = at === segments.length - 1;
    return (exact.length > 0 || last || at === 0 ? exact : Object.values(node)).some(
      (child) => last || walk(child, at + 1),
    );
  };
  return walk((tree ??= JSON.parse(OPENCLAW_CONFIG_TREE) as Tree), 0);
}

export function acceptOpenclawKey<T extends { level: string; path: string; message: string }>(issue: T): T {
  const unknown = issue.level === 'error' && /^is not a known (key|config section)/.test(issue.message);
  return unknown && isOpenclawKey(issue.path) ? { ...issue, level: 'warning', message: IGNORED_OPENCLAW_KEY } : issue;
}

/** Every problem of `config` beyond its schema. */
export function configIssues(config: KernelConfig): Array<{ path: string; message: string }> {
  return [...redactPatternIssues(config), ...agentIssues(config), ...sandboxUserIssues(config)];
}

/** `sandbox.docker.user` as root: the schema checks the form, this refuses uid or gid 0 in the backend's words. */
function sandboxUserIssues(config: KernelConfig): Array<{ path: string; message: string }> {
  const agents = config.agents;
  const places: Array<[string, unknown]> = [
    ['agents.defaults.sandbox.docker.user', agents?.defaults?.sandbox?.docker?.user],
  ];
  (Array.isArray(agents?.list) ? agents.list : []).forEach((agent, index) => {
    places.push([`agents.list[${index}].sandbox.docker.user`, agent?.sandbox?.docker?.user]);
  });
  return places.flatMap(([path, value]) => {
    if (typeof value !== 'string' || !/^\d+(:\d+)?$/.test(value)) return [];
    try {
      parseSandboxUser(value);
      return [];
    } catch (error) {
      return [{ path, message: (error as Error).message.replace(/^sandbox docker\.user "[^"]*" /, '') }];
    }
  });
}

/** Agent ids the schema cannot cross-check: one listed twice, a binding naming no configured agent. */
function agentIssues(config: KernelConfig): Array<{ path: string; message: string }> {
  const id = (value: unknown) =>
    String(value ?? '')
      .trim()
      .toLowerCase();
  const ids = (Array.isArray(config.agents?.list) ? config.agents.list : []).map((agent) => id(agent?.id));
  const known = ids.length > 0 ? ids : ['main'];
  const issues = ids.flatMap((at, index) =>
    ids.indexOf(at) < index
      ? [{ path: `agents.list[${index}].id`, message: `"${at}" is already the id of agents.list[${ids.indexOf(at)}]` }]
      : [],
  );
  (Array.isArray(config.bindings) ? config.bindings : []).forEach((binding, index) => {
    if (typeof binding?.agentId !== 'string' || known.includes(id(binding.agentId))) return;
    issues.push({
      path: `bindings[${index}].agentId`,
      message: `names agent "${binding.agentId}", which is not configured (agents: ${[...new Set(known)].join(', ')}; add it to agents.list)`,
    });
  });
  return issues;
}
