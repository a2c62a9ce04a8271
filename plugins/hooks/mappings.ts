/**
 * `hooks.mappings`: which mapping owns `POST <path>/<name>`, and its templates. Templates
 * take `{{payload.field}}` or `{{field}}`, indexes (`{{messages[0].subject}}`),
 * `{{headers.x-event-type}}`, `{{query.kind}}`, `{{path}}` and `{{now}}`; a missing value is
 * empty, an object is its JSON.
 */
import type { HookMapping } from './settings.js';

export interface TemplateScope {
  payload: Record<string, unknown>;
  headers: Record<string, string>;
  query: Record<string, string>;
  /** The subpath after hooks.path, without slashes. */
  path: string;
  now: string;
}

const trimSlashes = (path: string) => path.replace(/^\/+|\/+$/g, '');

/** The first mapping whose predicates all hold (a mapping without any matches every path). */
export function findMapping(
  mappings: readonly HookMapping[],
  subpath: string,
  payload: Record<string, unknown>,
): { mapping: HookMapping; index: number } | undefined {
  const index = mappings.findIndex((mapping) => {
    if (mapping.match?.path !== undefined && trimSlashes(mapping.match.path) !== subpath) return false;
    if (mapping.match?.source !== undefined && payload.source !== mapping.match.source) return false;
    return true;
  });
  return index < 0 ? undefined : { mapping: mappings[index]!, index };
}

/** Segments of `a.b[0].c` (bracket indexes become their own segments). */
function segments(expression: string): string[] {
  return expression
    .split('.')
    .flatMap((part) => part.split(/\[(\d+)\]/).filter((piece) => piece !== ''))
    .map((piece) => piece.trim());
}

function lookup(root: unknown, parts: readonly string[]): unknown {
  let value = root;
  for (const part of parts) {
    // Own properties only: a template must not reach Object.prototype.
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function resolveExpression(expression: string, scope: TemplateScope): unknown {
  const trimmed = expression.trim();
  if (trimmed === 'now') return scope.now;
  if (trimmed === 'path') return scope.path;
  if (trimmed.startsWith('headers.')) return scope.headers[trimmed.slice('headers.'.length).toLowerCase()];
  if (trimmed.startsWith('query.')) return scope.query[trimmed.slice('query.'.length)];
  const parts = segments(trimmed);
  return lookup(scope.payload, parts[0] === 'payload' ? parts.slice(1) : parts);
}

export function renderTemplate(template: string, scope: TemplateScope): string {
  return template.replace(/\{\{([^{}]+)\}\}/g, (_match, expression: string) => {
    const value = resolveExpression(expression, scope);
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

export const isTemplated = (value: string | undefined): boolean => value !== undefined && /\{\{[^{}]+\}\}/.test(value);
