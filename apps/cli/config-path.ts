/**
 * The config path `claw config get/set/unset` takes: `agents.defaults.workspace`,
 * `plugins.entries["my.plugin"].config`, `list[0].id`, parsed into segments.
 */
import type { PathSegment } from '../../kernel/index.js';

export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`invalid config path "${path}": ${why}`);
  };
  if (!path.trim()) fail('empty path');
  while (i < path.length) {
    if (path[i] === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) fail('unclosed "["');
      const inner = path.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) segments.push(Number(inner));
      else if (/^(["']).*\1$/.test(inner)) segments.push(inner.slice(1, -1));
      else fail(`bad index "[${inner}]"`);
      i = close + 1;
      if (path[i] === '.') i++;
      continue;
    }
    let end = i;
    while (end < path.length && path[end] !== '.' && path[end] !== '[') end++;
    const key = path.slice(i, end);
    if (!key) fail('empty segment');
    segments.push(key);
    i = end;
    if (path[i] === '.') {
      i++;
      if (i === path.length) fail('trailing "."');
    }
  }
  return segments;
}
