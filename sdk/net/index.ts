/**
 * Reaching the network on the model's behalf: URL and address checks against private
 * ranges (ssrf.ts), a fetch that pins the checked address and re-checks every redirect
 * (guarded-fetch.ts). And for whatever takes credentials over the network: constant-time
 * secret checks and loopback hosts (auth-kit.ts).
 */
export * from './ssrf.js';
export * from './guarded-fetch.js';
export * from './auth-kit.js';
