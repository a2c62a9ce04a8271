/**
 * claw's rules, as the kernel enforces them (kernel/policy.ts): the redactor, config checks
 * beyond the schemas, the tool policy and sandbox routing. Everything that boots a kernel —
 * the CLI, the gateway, the test kit — hands it this.
 */
import type { KernelPolicy } from '../kernel/index.js';
import { acceptOpenclawKey, configIssues } from './config-checks.js';
import { createRedactor } from '../sdk/redact.js';
import { resolveSandboxRoute } from '../sdk/sandbox/route.js';
import { configuredToolPolicy } from '../sdk/tool-policy.js';

export const clawPolicy: KernelPolicy = {
  redactor: (config, env) => createRedactor({ config, env }),
  configIssues,
  tolerate: acceptOpenclawKey,
  toolPolicy: configuredToolPolicy,
  sandboxRoute: resolveSandboxRoute,
};
