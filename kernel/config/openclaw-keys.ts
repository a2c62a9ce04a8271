/**
 * OpenClaw refuses unknown config keys, and so does claw, except keys OpenClaw documents: an
 * openclaw.json brought over must start claw. Those are warned about and unused (`claw doctor`).
 */
import { OPENCLAW_CONFIG_TREE } from '../generated/openclaw-keys.js';

type Tree = { [key: string]: Tree };
let tree: Tree | undefined;
export const IGNORED_OPENCLAW_KEY = 'is an OpenClaw setting claw does not implement; ignored';

/** Ids and array items match `*`; below the top level, an id the docs wrote as an example (`main`) matches any. */
export function isOpenclawKey(path: string): boolean {
  const segments = path.replace(/\[\d+\]/g, '.*').split('.');
  const walk = (node: Tree, at: number): boolean => {
    const exact = [segments[at]!, '*'].filter((key) => Object.hasOwn(node, key)).map((key) => node[key]!);
    const last = at === segments.length - 1;
    return (exact.length > 0 || last || at === 0 ? exact : Object.values(node)).some((child) => last || walk(child, at + 1));
  };
  return walk((tree ??= JSON.parse(OPENCLAW_CONFIG_TREE) as Tree), 0);
}

export function acceptOpenclawKey<T extends { level: string; path: string; message: string }>(issue: T): T {
  const unknown = issue.level === 'error' && /^is not a known (key|config section)/.test(issue.message);
  return unknown && isOpenclawKey(issue.path) ? { ...issue, level: 'warning', message: IGNORED_OPENCLAW_KEY } : issue;
}
