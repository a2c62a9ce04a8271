/**
 * Sessions as an SDK service: the per-agent session store (sessions.json), transcripts
 * (JSONL per session), reset policies and session keys. The agent plugin and anything
 * else that reads or writes sessions use these, so swapping the agent loop keeps them.
 */
export * from './keys.js';
export * from './store.js';
export * from './transcript.js';
export * from './reset.js';
export * from './service.js';
export * from './lock.js';
export * from './tool-pairing.js';
export * from './trim.js';
export * from './send-policy.js';
