/**
 * The sessions contract: session keys, the store and transcript interfaces, and the
 * "sessions" service (provided by the sessions plugin) that the agent, its loop and
 * anything else reading or writing sessions ask for by name.
 */
export * from './keys.js';
export * from './store.js';
export * from './transcript.js';
export * from './service.js';
