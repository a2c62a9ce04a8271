/**
 * Schema validation. The kernel's own schemas and the JSON Schema meta-schema are
 * precompiled at build time: checking them needs no ajv. Plugin schemas are compiled by one
 * shared ajv, loaded on first use (~25 ms, then ~1 ms per schema), cached by identity and
 * content; a ValidatorStore (the host's validatorCache) keeps them for the next process.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { formatPath, getPath, type PathSegment } from './config/path.js';
import { AJV_OPTIONS, KERNEL_CONFIG_SCHEMA, PLUGIN_MANIFEST_SCHEMA } from './generated/schemas.js';

const require = createRequire(import.meta.url);

export type JsonSchema = Record<string, unknown>;

export interface SchemaIssue {
  /** Dotted path of the offending value, e.g. `plugins.entries.foo.config.port`. */
  path: string;
  message: string;
}

let ajv: AjvClass | undefined;
const byIdentity = new WeakMap<object, ValidateFunction>();
const byContent = new Map<string, ValidateFunction>();

/** The kernel's own schemas, precompiled by `npm run gen` into generated/validators/<name>.cjs. */
const PRECOMPILED = new Map<object, string>([
  [KERNEL_CONFIG_SCHEMA, 'kernel-config'],
  [PLUGIN_MANIFEST_SCHEMA, 'plugin-manifest'],
]);

const precompiled = (name: string) => require(`./generated/validators/${name}.cjs`) as ValidateFunction;

/** The ajv instance plugin schemas are compiled with (a ValidatorStore writes its standalone code). */
export function schemaCompiler(): AjvClass {
  if (!ajv) {
    const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
    ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  }
  return ajv;
}

/** Compiled validators kept between processes; loading one must cost less than compiling it. */
export interface ValidatorStore {
  load(schema: JsonSchema): ValidateFunction | undefined;
  save(schema: JsonSchema, validate: ValidateFunction): void;
}

let store: ValidatorStore | undefined;

/** Where compiled validators are kept from now on (undefined: nowhere, compile every time). */
export function useValidatorStore(next: ValidatorStore | undefined): void {
  store = next;
}

export function compileSchema(schema: JsonSchema): ValidateFunction {
  const cached = byIdentity.get(schema);
  if (cached) return cached;
  const builtIn = PRECOMPILED.get(schema);
  if (builtIn) {
    const validate = precompiled(builtIn);
    byIdentity.set(schema, validate);
    return validate;
  }
  const content = JSON.stringify(schema);
  let validate = byContent.get(content);
  if (!validate) {
    validate = store?.load(schema);
    if (!validate) {
      validate = schemaCompiler().compile(schema) as ValidateFunction;
      store?.save(schema, validate);
    }
    byContent.set(content, validate);
  }
  byIdentity.set(schema, validate);
  return validate;
}

/** Problems with a schema itself (checked against the JSON Schema meta-schema), or [] if it is usable. */
export function schemaProblems(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return ['must be a JSON Schema object'];
  const validate = precompiled('json-schema');
  if (validate(schema)) return [];
  return formatErrors(validate.errors ?? [], schema).map((issue) => `${issue.path}: ${issue.message}`);
}

/**
 * Validate `data` (mutated: defaults are filled in) and return readable issues.
 * `base` is prefixed to every path, so a plugin config reports its full config path.
 */
export function validateWith(schema: JsonSchema, data: unknown, base: readonly PathSegment[] = []): SchemaIssue[] {
  const validate = compileSchema(schema);
  if (validate(data)) return [];
  return formatErrors(validate.errors ?? [], data, base);
}

/** Readable messages for ajv's keywords; `key` is the property the message is about, one level down. */
const MESSAGES: Record<string, (params: Record<string, any>) => { message: string; key?: string }> = {
  required: (params) => ({ message: 'is required', key: String(params.missingProperty) }),
  additionalProperties: (params) => ({ message: 'is not a known key', key: String(params.additionalProperty) }),
  enum: (params) => ({
    message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`,
  }),
  const: (params) => ({ message: `must be ${JSON.stringify(params.allowedValue)}` }),
  anyOf: () => ({ message: 'does not match any allowed shape' }),
  oneOf: () => ({ message: 'does not match any allowed shape' }),
  propertyNames: (params) => ({ message: `has a key that is not allowed (${String(params.propertyName)})` }),
};

export function formatErrors(
  errors: readonly ErrorObject[],
  data: unknown,
  base: readonly PathSegment[] = [],
): SchemaIssue[] {
  const byPath = new Map<string, string[]>();
  // anyOf/oneOf report one error per failed branch plus a summary; the summary alone reads best.
  const unions = new Set(
    errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath),
  );
  for (const error of errors) {
    if (unions.has(error.instancePath) && error.keyword !== 'anyOf' && error.keyword !== 'oneOf') continue;
    if (error.keyword === 'if') continue;
    const known = MESSAGES[error.keyword]?.(error.params);
    const segments = pointerToSegments(error.instancePath, data);
    if (known?.key !== undefined) segments.push(known.key);
    const message = known?.message ?? error.message ?? 'is invalid';
    const path = formatPath([...base, ...segments]);
    const list = byPath.get(path) ?? [];
    if (!list.includes(message)) list.push(message);
    byPath.set(path, list);
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages.join('; ') }));
}

function pointerToSegments(pointer: string, data: unknown): PathSegment[] {
  if (!pointer) return [];
  const segments: PathSegment[] = [];
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const parent = getPath(data, segments);
    segments.push(Array.isArray(parent) && /^\d+$/.test(key) ? Number(key) : key);
  }
  return segments;
}
