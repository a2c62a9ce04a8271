/**
 * Reading a channel's setup fields alike in `claw channels add` and the onboard wizard: a flag,
 * an answer or a variable is the same value. Values are config-shaped ("a.b" nests).
 */
import type { ChannelSetup, ChannelSetupField, ChannelSetupValues } from '../types/channels.js';

type AnyRecord = Record<string, unknown>;

/** A field's value from text (a flag, an answer, a variable); throws a message naming the flag. */
export function parseSetupValue(field: ChannelSetupField, text: string): string | number | boolean | string[] {
  const value = text.trim();
  if (field.type === 'integer') {
    if (!/^\d+$/.test(value)) throw new Error(`--${field.flag} must be a whole number (got "${value}")`);
    return Number(value);
  }
  if (field.type === 'boolean') {
    if (/^(true|yes|on|1)$/i.test(value)) return true;
    if (/^(false|no|off|0)$/i.test(value)) return false;
    throw new Error(`--${field.flag} must be true or false (got "${value}")`);
  }
  if (field.type === 'list') return value.split(',').flatMap((item) => (item.trim() ? [item.trim()] : []));
  if (field.choices && !field.choices.includes(value))
    throw new Error(`--${field.flag} must be ${field.choices.join(' or ')} (got "${value}")`);
  return value;
}

/** The value at a dotted key (undefined when unset or empty). */
export function setupValue(values: ChannelSetupValues, key: string): unknown {
  let at: unknown = values;
  for (const part of key.split('.')) at = at && typeof at === 'object' ? (at as AnyRecord)[part] : undefined;
  return at === '' || at === null ? undefined : at;
}

/** Set (or, with undefined, remove) the value at a dotted key; records are made, and emptied ones removed. */
export function writeSetupValue(target: AnyRecord, key: string, value: unknown): void {
  const [head, ...rest] = key.split('.') as [string, ...string[]];
  const next = target[head];
  const nested = typeof next === 'object' && next !== null && !Array.isArray(next) ? (next as AnyRecord) : undefined;
  if (rest.length === 0) {
    if (value === undefined) delete target[head];
    else target[head] = value;
  } else if (value !== undefined) writeSetupValue(nested ?? (target[head] = {}), rest.join('.'), value);
  else if (nested) {
    writeSetupValue(nested, rest.join('.'), undefined);
    if (Object.keys(nested).length === 0) delete target[head];
  }
}

/** The fields that apply given the values so far (Slack's app token only in socket mode). */
export function setupFields(setup: ChannelSetup, values: ChannelSetupValues): ChannelSetupField[] {
  return setup.fields.filter((field) => !field.when || field.when(values));
}
