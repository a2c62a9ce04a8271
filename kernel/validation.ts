/**
 * Schema validation. The kernel's own schemas (config, manifest, wire frames) and the
 * JSON Schema meta-schema are precompiled at build time, so checking them needs no ajv at
 * all. Plugin schemas are compiled by one shared ajv instance, loaded on first use (it
 * costs ~25 ms to import, ~1 ms per compile) and cached by schema identity and content.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { formatPath, getPath, type PathSegment } from './config/path.js';
import { AJV_OPTIONS } from './validation-options.js';
import * as precompiled from './generated/validators.js';
import * as schemas from './generated/schemas.js';

const require = createRequire(import.meta.url);

export type JsonSchema = Record<string, unknown>;

export interface SchemaIssue {
  /** Dotted path of the offending value, e.g. `plugins.entries.foo.config.port`. */
  path: string;
  message: string;
}

let ajv: AjvClass | undefined;
const byIdentity = new WeakMap<object, ValidateFunction>([
  [schemas.KERNEL_CONFIG_SCHEMA, precompiled.validateKernelConfig],
  [schemas.PLUGIN_MANIFEST_SCHEMA, precompiled.validatePluginManifest],
  [schemas.FRAME_SCHEMA, precompiled.validateFrame],
  [schemas.REQUEST_FRAME_SCHEMA, precompiled.validateRequestFrame],
  [schemas.RESPONSE_FRAME_SCHEMA, precompiled.validateResponseFrame],
  [schemas.EVENT_FRAME_SCHEMA, precompiled.validateEventFrame],
  [schemas.ERROR_SHAPE_SCHEMA, precompiled.validateErrorShape],
  [schemas.CONNECT_PARAMS_SCHEMA, precompiled.validateConnectParams],
  [schemas.HELLO_OK_SCHEMA, precompiled.validateHelloOk],
] as Array<[object, ValidateFunction]>);
const byContent = new Map<string, ValidateFunction>();

function instance(): AjvClass {
  if (!ajv) {
    const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
    ajv = new Ajv({ ...AJV_OPTIONS });
  }
  return ajv;
}

export function compileSchema(schema: JsonSchema): ValidateFunction {
  const cached = byIdentity.get(schema);
  if (cached) return cached;
  const key = JSON.stringify(schema);
  let validate = byContent.get(key);
  if (!validate) {
    validate = instance().compile(schema) as ValidateFunction;
    byContent.set(key, validate);
  }
  byIdentity.set(schema, validate);
  return validate;
}

/** Problems with a schema itself (checked against the JSON Schema meta-schema), or [] if it is usable. */
export function schemaProblems(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return ['must be a JSON Schema object'];
  const validate = precompiled.validateJsonSchema as ValidateFunction;
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

export function formatErrors(errors: readonly ErrorObject[], data: unknown, base: readonly PathSegment[] = []): SchemaIssue[] {
  const byPath = new Map<string, string[]>();
  // anyOf/oneOf report one error per failed branch plus a summary; the summary alone reads best.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
  for (const error of errors) {
    if (unions.has(error.instancePath) && error.keyword !== 'anyOf' && error.keyword !== 'oneOf') continue;
    if (error.keyword === 'if') continue;
    const segments = pointerToSegments(error.instancePath, data);
    let message = error.message ?? 'is invalid';
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') {
      segments.push(String(params.missingProperty));
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      segments.push(String(params.additionalProperty));
      message = 'is not a known key';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (error.keyword === 'const') {
      message = `must be ${JSON.stringify(params.allowedValue)}`;
    } else if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      message = 'does not match any allowed shape';
    } else if (error.keyword === 'propertyNames') {
      message = `has a key that is not allowed (${String(params.propertyName)})`;
    }
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
