/** Reading current values out of the raw openclaw.json and editing it in place, plus secret masking. */

export type AnyRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object at `path`, or undefined when any part is missing or not an object. */
export function getRecord(raw: unknown, ...path: string[]): AnyRecord | undefined {
  let here: unknown = raw;
  for (const key of path) here = isRecord(here) ? here[key] : undefined;
  return isRecord(here) ? here : undefined;
}

/** The object at `path`, created (replacing a non-object) where missing. */
export function ensureRecord(raw: AnyRecord, ...path: string[]): AnyRecord {
  let here = raw;
  for (const key of path) {
    if (!isRecord(here[key])) here[key] = {};
    here = here[key] as AnyRecord;
  }
  return here;
}

export function getString(record: AnyRecord | undefined, key: string): string | undefined {
  const value = record?.[key];
  return typeof value === 'string' && value.trim() ? value : undefined;
}

/** `agents.defaults.model` as a ref: the string, or the object's primary. */
export function currentModel(raw: AnyRecord): string | undefined {
  const model = getRecord(raw, 'agents', 'defaults')?.model;
  if (typeof model === 'string') return model || undefined;
  return isRecord(model) && typeof model.primary === 'string' ? model.primary : undefined;
}

/** Make `ref` the default model, keeping configured fallbacks. */
export function setDefaultModel(raw: AnyRecord, ref: string): void {
  const defaults = ensureRecord(raw, 'agents', 'defaults');
  defaults.model = isRecord(defaults.model) ? { ...defaults.model, primary: ref } : ref;
}

/**
 * A secret as it may be shown: its kind's prefix and last four characters (`sk-…abcd`),
 * never more than a quarter of it.
 */
export function maskSecret(secret: string): string {
  const value = secret.trim();
  if (value.length < 12) return '…';
  const prefix = /^(sk-ant-|sk-|gsk_|xai-)/.exec(value)?.[1] ?? '';
  return `${prefix}…${value.slice(-4)}`;
}

/** `text` with each of `secrets` masked (an error message quoting what was typed). */
export function maskIn(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(maskSecret(secret));
  return out;
}
