/**
 * Schema validation. The kernel's own schemas (config, manifest) and the JSON Schema
 * meta-schema are precompiled at build time, so checking them needs no ajv at all. Plugin
 * schemas are compiled by one shared ajv instance, loaded on first use (it costs ~25 ms to
 * import plus ~1 ms per schema), and cached three ways: by schema object, by content in
 * memory, and as standalone validator code on disk keyed by a hash of the schema — bundled
 * plugins' schemas are written to dist/validators at build time, others to
 * <stateDir>/cache/validators the first time they are compiled.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { formatPath, getPath, type PathSegment } from './config/path.js';
import { AJV_OPTIONS, KERNEL_CONFIG_SCHEMA, PLUGIN_MANIFEST_SCHEMA } from './generated/schemas.js';
import { writeFileAtomic } from './util/fs.js';

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

function precompiled(name: string): ValidateFunction {
  return require(`./generated/validators/${name}.cjs`) as ValidateFunction;
}

function instance(): AjvClass {
  if (!ajv) {
    const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
    ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  }
  return ajv;
}

/** Validators compiled at build time for bundled plugins (absent when running from source). */
const BUILT_IN_CACHE = join(dirname(fileURLToPath(import.meta.url)), '..', 'validators');
let writableCache: string | undefined;

/** Where newly compiled validators are kept for the next process (normally <stateDir>/cache/validators). */
export function setValidatorCacheDir(dir: string | undefined): void {
  writableCache = dir;
}

/** The file name a schema's compiled validator is stored under. */
export function validatorKey(schema: JsonSchema): string {
  return createHash('sha256').update(`ajv8:${JSON.stringify(AJV_OPTIONS)}:${JSON.stringify(schema)}`).digest('hex').slice(0, 32);
}

function loadCached(key: string): ValidateFunction | undefined {
  for (const dir of [BUILT_IN_CACHE, writableCache]) {
    if (!dir) continue;
    const file = join(dir, `${key}.cjs`);
    if (!existsSync(file)) continue;
    try {
      return require(file) as ValidateFunction;
    } catch {
      // A damaged entry is recompiled and rewritten below.
    }
  }
  return undefined;
}

/**
 * Standalone CommonJS code for `validate`. Its ajv runtime helpers are required by
 * absolute path unless `portable`, so the file works from any directory.
 */
export function standaloneValidator(validate: ValidateFunction, portable = false): string {
  const standalone = (require('ajv/dist/standalone') as { default: (ajv: AjvClass, fn: ValidateFunction) => string }).default;
  const code = standalone(instance(), validate);
  if (portable) return code;
  const runtime = dirname(require.resolve('ajv/dist/runtime/equal'));
  return code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9_]+)"\)/g, (_match, name: string) => `require(${JSON.stringify(join(runtime, name))})`);
}

function storeCached(key: string, validate: ValidateFunction): void {
  if (!writableCache) return;
  try {
    writeFileAtomic(join(writableCache, `${key}.cjs`), standaloneValidator(validate), { fsync: false });
  } catch {
    // The cache is an optimisation; a read-only state dir just means compiling each time.
  }
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
    const key = validatorKey(schema);
    validate = loadCached(key);
    if (!validate) {
      validate = instance().compile(schema) as ValidateFunction;
      storeCached(key, validate);
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
  enum: (params) => {
    const allowed = (params.allowedValues as unknown[]).map((value) => JSON.stringify(value));
    return { message: `must be one of ${allowed.join(', ')}` };
  },
  const: (params) => ({ message: `must be ${JSON.stringify(params.allowedValue)}` }),
  anyOf: () => ({ message: 'does not match any allowed shape' }),
  oneOf: () => ({ message: 'does not match any allowed shape' }),
  propertyNames: (params) => ({ message: `has a key that is not allowed (${String(params.propertyName)})` }),
};

export function formatErrors(errors: readonly ErrorObject[], data: unknown, base: readonly PathSegment[] = []): SchemaIssue[] {
  const byPath = new Map<string, string[]>();
  // anyOf/oneOf report one error per failed branch plus a summary; the summary alone reads best.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
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
