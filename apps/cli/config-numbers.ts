/**
 * Numbers given to `claw config set`, checked before anything is written. JSON has no
 * Infinity or NaN (`1e400` parses to Infinity): written, they became null, or vanished in
 * a config.patch, while the command said "Set". And a number outside the range the config
 * schema allows is refused with the whole range, where the validator names only the bound
 * that was crossed ("must be <= 5" says nothing of the minimum).
 */
import { formatPath, type PathSegment } from '../../kernel/index.js';

type Schema = Record<string, any>;

type Found = Array<[PathSegment[], number]>;

/** Every number in `value` with its path below `base`. */
function numbersIn(value: unknown, base: readonly PathSegment[], into: Found = []): Found {
  if (typeof value === 'number') into.push([[...base], value]);
  else if (Array.isArray(value)) value.forEach((item, index) => numbersIn(item, [...base, index], into));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) numbersIn(item, [...base, key], into);
  }
  return into;
}

/** The first number in `value` that JSON cannot hold, as a refusal naming its key; undefined when there is none. */
export function nonFiniteNumber(value: unknown, path: readonly PathSegment[], text: string): string | undefined {
  const found = numbersIn(value, path).find(([, number]) => !Number.isFinite(number));
  if (!found) return undefined;
  const [at, number] = found;
  const shown = at.length === path.length ? text : String(number);
  return `${formatPath(at)}: ${shown} is not a finite number (JSON has no Infinity or NaN); nothing written`;
}

function matches(source: string, key: string): boolean {
  try {
    return new RegExp(source, 'u').test(key);
  } catch {
    // Not a pattern this engine reads: the validator reports the key, if anything.
    return false;
  }
}

/** The subschema that describes the value at `segments`, as far as plain properties, patterns and items lead. */
export function schemaAt(schema: Schema | undefined, segments: readonly PathSegment[]): Schema | undefined {
  let node = schema;
  for (const segment of segments) {
    if (!node || typeof node !== 'object') return undefined;
    if (typeof segment === 'number') {
      node = typeof node.items === 'object' && !Array.isArray(node.items) ? node.items : undefined;
      continue;
    }
    const patterns = Object.entries((node.patternProperties ?? {}) as Record<string, Schema>);
    const pattern = patterns.find(([source]) => matches(source, segment))?.[1];
    const additional =
      typeof node.additionalProperties === 'object' ? (node.additionalProperties as Schema) : undefined;
    node = node.properties?.[segment] ?? pattern ?? additional;
  }
  return node;
}

const BOUNDS: Array<[keyword: string, words: string, fits: (value: number, bound: number) => boolean]> = [
  ['minimum', '>=', (value, bound) => value >= bound],
  ['exclusiveMinimum', '>', (value, bound) => value > bound],
  ['maximum', '<=', (value, bound) => value <= bound],
  ['exclusiveMaximum', '<', (value, bound) => value < bound],
];

/** The first number in `value` outside its schema's range, as a refusal naming its key and the range. */
export function outOfRange(value: unknown, path: readonly PathSegment[], schema: Schema): string | undefined {
  for (const [at, number] of numbersIn(value, path)) {
    const node = schemaAt(schema, at);
    if (!node) continue;
    const bounds = BOUNDS.filter(([keyword]) => typeof node[keyword] === 'number');
    if (bounds.every(([keyword, , fits]) => fits(number, node[keyword] as number))) continue;
    const kind = node.type === 'integer' ? 'an integer' : 'a number';
    const range = bounds.map(([keyword, words]) => `${words} ${node[keyword]}`).join(' and ');
    return `${formatPath(at)}: ${number} is out of range: it must be ${kind} ${range}; nothing written`;
  }
  return undefined;
}
