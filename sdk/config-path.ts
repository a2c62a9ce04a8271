/**
 * Editing config by path (`claw config set/unset`, the gateway's config methods): whether
 * a value is there, setting or removing it. Formatting and reading a path are the kernel's
 * (kernel/config/path.ts); parsing the one a person types is the CLI's (apps/cli/config-path.ts).
 */
import { formatPath, getPath, type PathSegment } from '../kernel/index.js';

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return value !== null && typeof value === 'object';
}

export function hasPath(root: unknown, segments: readonly PathSegment[]): boolean {
  let current: unknown = root;
  for (const segment of segments) {
    if (!isContainer(current) || !Object.prototype.hasOwnProperty.call(current, segment)) return false;
    current = (current as Record<string, unknown>)[segment as string];
  }
  return true;
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Set a value, creating objects (or arrays for numeric segments) along the way. Mutates `root`. */
export function setPath(root: Record<string, unknown>, segments: readonly PathSegment[], value: unknown): void {
  if (segments.length === 0) throw new Error('cannot set the config root');
  let current: Record<string, unknown> | unknown[] = root;
  segments.forEach((segment, index) => {
    if (typeof segment === 'string' && FORBIDDEN.has(segment)) {
      throw new Error(`invalid config path: "${segment}" is not allowed`);
    }
    const last = index === segments.length - 1;
    const container = current as Record<string, unknown>;
    if (last) {
      container[segment as string] = value;
      return;
    }
    let next = container[segment as string];
    if (!isContainer(next)) {
      if (next !== undefined) {
        throw new Error(
          `cannot set ${formatPath(segments)}: ${formatPath(segments.slice(0, index + 1))} is not an object`,
        );
      }
      next = typeof segments[index + 1] === 'number' ? [] : {};
      container[segment as string] = next;
    }
    current = next as Record<string, unknown>;
  });
}

/** Remove a value; empty parent objects left behind are removed too. Returns whether anything was removed. */
export function unsetPath(root: Record<string, unknown>, segments: readonly PathSegment[]): boolean {
  if (segments.length === 0) return false;
  const parents: Array<Record<string, unknown> | unknown[]> = [];
  let current: unknown = root;
  for (const segment of segments.slice(0, -1)) {
    if (!isContainer(current)) return false;
    parents.push(current);
    current = (current as Record<string, unknown>)[segment as string];
  }
  if (!isContainer(current)) return false;
  const last = segments[segments.length - 1]!;
  if (!Object.prototype.hasOwnProperty.call(current, last)) return false;
  if (Array.isArray(current) && typeof last === 'number') current.splice(last, 1);
  else delete (current as Record<string, unknown>)[last as string];
  // Prune now-empty objects so `unset` leaves no `{}` husks behind.
  for (let i = segments.length - 2; i >= 0; i--) {
    const node = getPath(root, segments.slice(0, i + 1));
    if (isContainer(node) && !Array.isArray(node) && Object.keys(node).length === 0) {
      delete (parents[i] as Record<string, unknown>)[segments[i] as string];
    } else break;
  }
  return true;
}
