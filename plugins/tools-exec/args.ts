/** Param helpers: the SDK's, plus the env-map reader exec needs. */
import { ParamError } from '../../sdk/plugin.js';

export {
  guard,
  optionalBoolean,
  optionalNumber,
  optionalString,
  ParamError,
  requiredString,
} from '../../sdk/plugin.js';

type Params = Record<string, unknown>;

/** Environment overrides; numbers and booleans are accepted as their string form. */
export function optionalEnv(params: Params, name: string): Record<string, string> | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ParamError(`"${name}" must be an object of string values`);
  const env: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') env[key] = item;
    else if (typeof item === 'number' || typeof item === 'boolean') env[key] = String(item);
    else throw new ParamError(`"${name}.${key}" must be a string`);
  }
  return env;
}
