/**
 * ajv options shared by the runtime compiler and the build-time generator of the
 * precompiled validators, so both produce validators that behave the same.
 */
export const AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  useDefaults: true,
  allowUnionTypes: true,
  validateFormats: false,
} as const;
