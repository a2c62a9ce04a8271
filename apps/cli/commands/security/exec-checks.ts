/**
 * Host exec policy. `exec` runs commands on the host, and by default (tools.exec.security
 * full, ask off) without asking, unless an agent's sessions are all sandboxed (sandbox mode
 * "all"). Where the tool policy lets an agent use it that way, a prompt injection in
 * anything the agent reads can become a shell command. Policy per agent comes from config
 * and the approvals document together (facts.ts), as the exec-approvals plugin applies it.
 */
import { userInfo } from 'node:os';
import { auditFacts } from './facts.js';
import type { AuditContext, Finding } from './types.js';

function unattendedCheck(ctx: AuditContext): Finding[] {
  const providers = ctx.plugins.filter((record) => record.enabled && record.manifest?.tools?.includes('exec'));
  if (providers.length === 0) return [];
  // An allowlist, a deny or a prompt means commands do not run unattended.
  const unattended = auditFacts(ctx).scopes.filter(
    (scope) => scope.can('exec') && scope.sandbox.mode !== 'all' && scope.exec.security === 'full' && scope.exec.ask === 'off',
  );
  const agents = unattended.map((scope) => scope.id);
  if (agents.length === 0) return [];
  let user = 'the gateway user';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): keep the generic wording.
  }
  return [{
    checkId: 'tools.exec.host_no_sandbox_no_approvals',
    severity: 'warn',
    title: 'Agents run shell commands on this machine unattended',
    detail: `The exec tool (plugin ${providers.map((record) => record.id).join(', ')}) is available to agent ${agents.join(', ')}: ` +
      `commands run on this host as ${user}, without a sandbox and without asking for approval, so instructions hidden in anything the ` +
      `agent reads can run commands.`,
    fix: 'Sandbox it (agents.defaults.sandbox.mode "non-main" or "all"; backend plugins.slots.sandbox, Docker by default), ask before ' +
      'host commands (tools.exec.security allowlist with tools.exec.ask on-miss; claw approvals allowlist add for the ones you trust), ' +
      'or take exec away where it is not needed: tools.deny ["group:runtime"] (per agent: agents.list[].tools.deny), or a tools.profile ' +
      'without it ("messaging" or "minimal").',
    fixable: false,
  }];
}

export function execChecks(ctx: AuditContext): Finding[] {
  return unattendedCheck(ctx);
}
