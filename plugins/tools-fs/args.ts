/** Param helpers come from the SDK (shared by every tool plugin). */
export { guard, optionalInteger, ParamError, requiredString } from '../../sdk/plugin.js';
