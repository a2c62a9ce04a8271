/**
 * The SSRF policy for one tool call: the configured one, narrowed when the calling session
 * is sandboxed (by the same rule the tool choke point routes with: `router`, the host's
 * "sandbox-route" service), so a sandboxed session's web tools cannot reach the gateway
 * host's own loopback services even through a trusted name.
 */
import type { KernelConfig, SandboxRouter } from '../../sdk/index.js';
import type { SsrfPolicy } from '../../sdk/net/index.js';

export interface CallerSession {
  agentId?: string;
  sessionKey?: string;
}

export function sessionSsrfPolicy(
  router: SandboxRouter,
  policy: SsrfPolicy,
  config: KernelConfig,
  paths: { stateDir: string; workspaceDir: string },
  caller: CallerSession,
): SsrfPolicy {
  const route = router.route(config, {
    agentId: caller.agentId,
    sessionKey: caller.sessionKey,
    workspaceDir: paths.workspaceDir,
    stateDir: paths.stateDir,
  });
  return route.sandboxed ? { ...policy, denyHostLoopback: true } : policy;
}
