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

const MUTATING_FS_TOOLS = ['write', 'edit', 'apply_patch'];

function unattendedCheck(ctx: AuditContext): Finding[] {
  const providers = ctx.plugins.filter((record) => record.enabled && record.manifest?.tools?.includes('exec'));
  if (providers.length === 0) return [];
  // An allowlist, a deny or a prompt means commands do not run unattended.
  const unattended = auditFacts(ctx).scopes.filter(
    (scope) =>
      scope.can('exec') && scope.sandbox.mode !== 'all' && scope.exec.security === 'full' && scope.exec.ask === 'off',
  );
  const agents = unattended.map((scope) => scope.id);
  if (agents.length === 0) return [];
  let user = 'the gateway user';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): keep the generic wording.
  }
  return [
    {
      checkId: 'tools.exec.host_no_sandbox_no_approvals',
      severity: 'warn',
      title: 'Agents run shell commands on this machine unattended',
      detail:
        `The exec tool (plugin ${providers.map((record) => record.id).join(', ')}) is available to agent ${agents.join(', ')}: ` +
        `commands run on this host as ${user}, without a sandbox and without asking for approval, so instructions hidden in anything the ` +
        `agent reads can run commands.`,
      fix:
        'Sandbox it (agents.defaults.sandbox.mode "non-main" or "all"; backend plugins.slots.sandbox, Docker by default), ask before ' +
        'host commands (tools.exec.security allowlist with tools.exec.ask on-miss; claw approvals allowlist add for the ones you trust), ' +
        'or take exec away where it is not needed: tools.deny ["group:runtime"] (per agent: agents.list[].tools.deny), or a tools.profile ' +
        'without it ("messaging" or "minimal").',
      fixable: false,
    },
  ];
}

/**
 * `security: "full"` written in the config (claw's default is full too, reported above;
 * this is the explicit choice, as OpenClaw reports it). Critical next to open chats.
 */
function securityFullCheck(ctx: AuditContext): Finding[] {
  const { scopes, openInbound } = auditFacts(ctx);
  const full = scopes.filter((scope) => scope.exec.configuredFull && scope.exec.security === 'full');
  if (full.length === 0) return [];
  const keys = [...new Set(full.map((scope) => scope.exec.securityKey))];
  const open = openInbound.map((entry) => entry.path);
  const unasked = full.some((scope) => scope.exec.ask !== 'always');
  return [
    {
      checkId: 'tools.exec.security_full_configured',
      severity: open.length > 0 ? 'critical' : 'warn',
      title: 'Host exec may run any command',
      detail:
        `${keys.join(', ')} ${keys.length > 1 ? 'are' : 'is'} "full" for agent ${full.map((scope) => scope.id).join(', ')}: ` +
        `every command the model asks for runs on the host${unasked ? ' without asking anyone' : ' once approved'}` +
        `${open.length > 0 ? `, and strangers can write to the assistant (${open.join(', ')})` : ''}.`,
      fix:
        'Set tools.exec.security to "allowlist" with tools.exec.ask "on-miss" (approve commands as they come, `claw approvals ' +
        'allowlist add` for the trusted ones); keep "full" for a dedicated agent that only you talk to.',
      fixable: false,
    },
  ];
}

/** Denying write/edit/apply_patch does not make an agent read-only while it has a shell. */
function fsDriftCheck(ctx: AuditContext): Finding[] {
  const hits = auditFacts(ctx).scopes.filter((scope) => {
    // In an "all" sandbox without write access to the workspace, exec cannot change it either.
    if (scope.sandbox.mode === 'all' && scope.sandbox.workspaceAccess !== 'rw') return false;
    return scope.can('exec') && MUTATING_FS_TOOLS.every((tool) => !scope.can(tool));
  });
  if (hits.length === 0) return [];
  const described = hits.map(
    (scope) => `${scope.id} (sandbox ${scope.sandbox.mode}, workspaceAccess ${scope.sandbox.workspaceAccess})`,
  );
  return [
    {
      checkId: 'tools.exec.fs_tools_disabled_but_exec_enabled',
      severity: 'warn',
      title: 'File tools are off but the shell can still write files',
      detail:
        `Agent ${described.join(', ')} ` +
        'cannot use write, edit or apply_patch, yet exec is available and can change any file the sandbox or host user can.',
      fix:
        'For a read-only agent deny exec and process too (tools.deny ["group:runtime"]); if the shell is needed, run it in sandbox ' +
        'mode "all" with workspaceAccess "ro" or "none".',
      fixable: false,
    },
  ];
}

export function execChecks(ctx: AuditContext): Finding[] {
  return [...unattendedCheck(ctx), ...securityFullCheck(ctx), ...fsDriftCheck(ctx)];
}
