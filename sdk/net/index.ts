/**
 * Reaching the network on the model's behalf: the host's "net" service, which checks URLs
 * and addresses against private ranges, pins the checked address and re-checks every
 * redirect (guard.ts). And for whatever takes credentials over the network: constant-time
 * secret checks and loopback hosts (auth-kit.ts). For HTTP routes: a request body read with a
 * size cap and a deadline (body.ts).
 */
export * from './guard.js';
export * from './auth-kit.js';
export * from './body.js';
export * from './node-http.js';
