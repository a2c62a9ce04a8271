/**
 * What a sandbox backend needs besides its contract (sdk/types/sandbox.ts): which sessions
 * are sandboxed and with what settings (route.ts), the bind checks every backend and
 * `claw sandbox explain` share (binds.ts), and the sandbox user (user.ts).
 */
export * from './route.js';
export * from './binds.js';
export * from './user.js';
