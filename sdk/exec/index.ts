/**
 * Exec policy every path that runs a command shares: what a model-supplied `env` may set,
 * which programs are launchers, and git on the host with the workspace's config unable to run
 * code. Small and dependency-free, so backends, approvers and the audit can all use it.
 */
export * from './env-policy.js';
export * from './launchers.js';
export * from './git.js';
