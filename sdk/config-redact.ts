/**
 * Secrets never leave the process in clear text when config is shown (`claw config get`,
 * the gateway's config.get): any value under a key that names a credential is replaced, as
 * is any path a plugin marks sensitive. Writing the marker back keeps the stored value.
 */
import type { PathSegment } from '../kernel/index.js';
import { isSecretKey } from './redact.js';

export const REDACTED = '__REDACTED__';

export function redactConfig(
  value: unknown,
  isSensitive: (path: readonly PathSegment[]) => boolean = () => false,
  at: PathSegment[] = [],
): unknown {
  if (Array.isArray(value)) return value.map((item, index) => redactConfig(item, isSensitive, [...at, index]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const path = [...at, key];
      const secret = isSecretKey(key) || isSensitive(path);
      if (secret && item !== null && item !== undefined && typeof item !== 'boolean' && typeof item !== 'number') {
        out[key] = typeof item === 'string' ? REDACTED : redactAll(item);
      } else {
        out[key] = redactConfig(item, isSensitive, path);
      }
    }
    return out;
  }
  return value;
}

function redactAll(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactAll);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactAll(item)]));
  }
  return typeof value === 'string' ? REDACTED : value;
}
