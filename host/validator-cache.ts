/**
 * The kernel's ValidatorStore: compiled plugin schemas kept as standalone validator code,
 * keyed by a hash of the schema. Bundled plugins' schemas (config sections and gateway method
 * parameters) are written to dist/validators at build time (scripts/postbuild.mjs), so
 * starting claw or answering its first request never compiles one; others go to
 * <stateDir>/cache/validators the first time they are compiled.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { schemaCompiler, type JsonSchema, type ValidatorStore } from '../kernel/index.js';
import { writeFileAtomic } from '../sdk/fs.js';
import { AJV_OPTIONS } from '../kernel/generated/schemas.js';

const require = createRequire(import.meta.url);

/** Validators compiled at build time for bundled plugins (absent when running from source). */
const BUILT_IN = join(dirname(fileURLToPath(import.meta.url)), '..', 'validators');

/**
 * Beside them, what each bundled schema makes of `{}` (its defaults filled in), by key; a
 * schema `{}` does not pass has no entry. Most sections and plugins are not configured at
 * all: checking those needs no validator code (loading all of them cost ~20 ms per start).
 */
export const EMPTY_RESULTS = 'empty.json';
let emptyResults: Record<string, Record<string, unknown>> | null | undefined;

function emptyResult(key: string): Record<string, unknown> | undefined {
  if (emptyResults === undefined) {
    try {
      emptyResults = JSON.parse(readFileSync(join(BUILT_IN, EMPTY_RESULTS), 'utf8')) as typeof emptyResults;
    } catch {
      emptyResults = null; // running from source: every schema loads its validator
    }
  }
  return emptyResults?.[key];
}

const isEmptyObject = (data: unknown): data is Record<string, unknown> =>
  data !== null &&
  typeof data === 'object' &&
  Object.getPrototypeOf(data) === Object.prototype &&
  Reflect.ownKeys(data).length === 0;

/** The file name a schema's compiled validator is stored under. */
export function validatorKey(schema: JsonSchema): string {
  return createHash('sha256')
    .update(`ajv8:${JSON.stringify(AJV_OPTIONS)}:${JSON.stringify(schema)}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * Standalone CommonJS code for `validate`. Its ajv runtime helpers are required by
 * absolute path unless `portable`, so the file works from any directory.
 */
export function standaloneValidator(validate: ValidateFunction, portable = false): string {
  const standalone = (
    require('ajv/dist/standalone') as {
      default: (ajv: ReturnType<typeof schemaCompiler>, fn: ValidateFunction) => string;
    }
  ).default;
  const code = standalone(schemaCompiler(), validate);
  if (portable) return code;
  const runtime = dirname(require.resolve('ajv/dist/runtime/equal'));
  return code.replace(
    /require\("ajv\/dist\/runtime\/([a-z0-9_]+)"\)/g,
    (_match, name: string) => `require(${JSON.stringify(join(runtime, name))})`,
  );
}

/** Reads the build's validators and `dir`'s, and keeps newly compiled ones in `dir`. */
export function validatorCache(dir: string): ValidatorStore {
  const stored = (key: string): ValidateFunction | undefined => {
    for (const from of [BUILT_IN, dir]) {
      const file = join(from, `${key}.cjs`);
      if (!existsSync(file)) continue;
      try {
        return require(file) as ValidateFunction;
      } catch {
        // A damaged entry is recompiled and rewritten.
      }
    }
    return undefined;
  };
  return {
    load(schema) {
      const key = validatorKey(schema);
      const empty = emptyResult(key);
      if (!empty) return stored(key);
      // `{}` gets the build's answer; anything else, the validator, loaded on first use.
      let real: ValidateFunction | undefined;
      const validate = ((data: unknown) => {
        if (isEmptyObject(data)) {
          Object.assign(data, structuredClone(empty));
          validate.errors = null;
          return true;
        }
        real ??= stored(key) ?? (schemaCompiler().compile(schema) as ValidateFunction);
        const ok = real(data);
        validate.errors = real.errors;
        return ok;
      }) as ValidateFunction;
      return validate;
    },
    save(schema, validate) {
      try {
        writeFileAtomic(join(dir, `${validatorKey(schema)}.cjs`), standaloneValidator(validate), { fsync: false });
      } catch {
        // The cache is an optimisation; a read-only state dir just means compiling each time.
      }
    },
  };
}
