/**
 * Config paths: `agents.defaults.workspace`, `plugins.entries["my.plugin"].config`, `list[0].id`.
 * The kernel formats and reads them (issues, redaction); sdk/config-path.ts parses and edits them.
 */
export type PathSegment = string | number;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENT.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out || '<root>';
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return value !== null && typeof value === 'object';
}

export function getPath(root: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = root;
  for (const segment of segments) {
    if (!isContainer(current)) return undefined;
    current = (current as Record<string, unknown>)[segment as string];
  }
  return current;
}
