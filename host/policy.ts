/**
 * claw's rules, as the kernel enforces them (kernel/policy.ts): the redactor, config checks
 * beyond the schemas, which plugins are on, the tool policy, sandbox routing and approval.
 * Everything that boots a kernel — the CLI, the gateway, the test kit — hands it this.
 */
import type { KernelPolicy } from '../kernel/index.js';
import { acceptOpenclawKey, configIssues } from './config-checks.js';
import { resolveEnablement } from './enablement.js';
import { resolveSandboxRoute, sandboxStep } from './sandbox-route.js';
import { deriveSandboxSlot, sandboxBackendIssues } from './sandbox-backend.js';
import { approvalStep } from './approval.js';
import { contributedConfigIssues } from './contributed-config.js';
import { createRedactor } from './redact.js';
import { configuredToolPolicy } from './tool-policy.js';

export const clawPolicy: KernelPolicy = {
  redactor: (config, env) => createRedactor({ config, env }),
  configIssues: (config) => [...configIssues(config), ...sandboxBackendIssues(config)],
  derive: deriveSandboxSlot,
  contributedConfigIssues,
  tolerate: acceptOpenclawKey,
  enablement: ({ id, origin, slots, enabledByDefault }, plugins) =>
    resolveEnablement(id, origin, slots, enabledByDefault, plugins),
  toolPolicy: configuredToolPolicy,
  sandbox: sandboxStep(resolveSandboxRoute),
  approve: approvalStep,
};
