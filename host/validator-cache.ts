/**
 * The kernel's ValidatorStore: compiled plugin schemas kept as standalone validator code,
 * keyed by a hash of the schema. Bundled plugins' schemas are written to dist/validators at
 * build time (scripts/postbuild.mjs), so starting claw never compiles one; others go to
 * <stateDir>/cache/validators the first time they are compiled.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
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
  return {
    load(schema) {
      const key = validatorKey(schema);
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
