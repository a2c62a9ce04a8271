/**
 * What host exec lets through without asking: safe bins (`tools.exec.safeBins`, stdin-only
 * filters from trusted directories) and the approvals allowlist (exec-approvals.json). An
 * interpreter or launcher in either turns "allowlist" into "anything": `env sh -c …`,
 * `find -exec`, `git -c core.pager=…`, a Makefile. Which binaries count is launchers.ts.
 */
import { isAbsolute, resolve } from 'node:path';
import { auditFacts, listedAgents, type AuditFacts } from './facts.js';
import { launchersMatching } from './launchers.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

/** Names a glob matched, shortened: "/usr/bin/*" matches every launcher there is. */
function names(list: readonly string[]): string {
  return list.length > 6 ? `${list.slice(0, 6).join(', ')}, +${list.length - 6} more` : list.join(', ');
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : [];

/** `tools.exec` and each agent's own `tools.exec`, with the key prefix to name them by. */
function execScopes(ctx: AuditContext): Array<[string, AnyRecord]> {
  const agents = listedAgents(ctx.config).map((agent): [string, AnyRecord] => [
    `agents.list.${agent.id}.tools.exec`,
    section(section(agent.tools).exec),
  ]);
  return [['tools.exec', section(section(ctx.config.tools).exec)], ...agents];
}

function safeBinChecks(ctx: AuditContext): Finding[] {
  const interpreters: string[] = [];
  const launchers: string[] = [];
  for (const [base, exec] of execScopes(ctx)) {
    for (const bin of strings(exec.safeBins)) {
      const hits = launchersMatching(bin);
      const named = (kind: string) => hits.filter((hit) => hit.kind === kind).map((hit) => hit.name);
      if (named('interpreter').length > 0)
        interpreters.push(`${base}.safeBins: ${bin} (${names(named('interpreter'))})`);
      if (named('launcher').length > 0) launchers.push(`${base}.safeBins: ${bin} (${names(named('launcher'))})`);
    }
  }
  const findings: Finding[] = [];
  if (interpreters.length > 0) {
    findings.push({
      checkId: 'tools.exec.safe_bins_interpreter_unprofiled',
      severity: 'warn',
      title: 'Interpreters listed as safe bins',
      detail:
        `${interpreters.join('; ')}: a safe bin runs in allowlist mode without asking, and an interpreter runs whatever program ` +
        `its arguments or stdin hold.`,
      fix: 'Remove interpreters from safeBins; approve the exact commands you need instead (`claw approvals allowlist add`).',
      fixable: false,
    });
  }
  if (launchers.length > 0) {
    findings.push({
      checkId: 'tools.exec.safe_bins_broad_behavior',
      severity: 'warn',
      title: 'Safe bins that do more than filter text',
      detail:
        `${launchers.join('; ')}: these start other programs or run project-defined commands, which the stdin-filter fast path ` +
        `was never meant to admit.`,
      fix:
        'Keep safeBins to plain filters (cut, uniq, head, tail, tr, wc); approve other commands one by one or ask for them ' +
        '(tools.exec.ask "on-miss").',
      fixable: false,
    });
  }
  return findings;
}

const PACKAGE_MANAGER_BINS = [
  '/usr/local/bin',
  '/opt/homebrew/bin',
  '/opt/local/bin',
  '/home/linuxbrew/.linuxbrew/bin',
];

/** Why a directory is a poor place to trust binaries from, if it is. */
function riskyDir(dir: string): string | undefined {
  if (!isAbsolute(dir)) return 'a relative path, resolved against whatever directory exec runs in';
  const path = resolve(dir).toLowerCase();
  const under = (root: string) => path === root || path.startsWith(`${root}/`);
  if (['/tmp', '/var/tmp', '/dev/shm', '/private/tmp'].some(under)) return 'a temporary directory anyone can write to';
  if (PACKAGE_MANAGER_BINS.includes(path)) return 'a package-manager directory, often writable without root';
  if (under('/home') || under('/users') || path.includes('/.local/bin') || path.includes('/node_modules/')) {
    return 'a directory the user (and the agent) can write to';
  }
  return undefined;
}

function trustedDirCheck(ctx: AuditContext): Finding[] {
  const hits = execScopes(ctx).flatMap(([base, exec]) =>
    strings(exec.safeBinTrustedDirs).flatMap((dir) => {
      const why = riskyDir(dir.trim());
      return why ? [`${base}.safeBinTrustedDirs: ${dir} (${why})`] : [];
    }),
  );
  if (hits.length === 0) return [];
  return [
    {
      checkId: 'tools.exec.safe_bin_trusted_dirs_risky',
      severity: 'warn',
      title: 'Safe bins trusted from writable directories',
      detail: `${hits.join('; ')}: a program dropped there under a safe bin's name runs without asking.`,
      fix: 'Trust only root-owned system directories (the defaults /bin and /usr/bin need no entry).',
      fixable: false,
    },
  ];
}

/** Whether an approvals entry for `agent` ("*" = every agent) meets a host without a sandbox. */
function unsandboxed(facts: AuditFacts, agent: string): boolean {
  const scopes = agent === '*' ? facts.scopes : facts.scopes.filter((scope) => scope.id === agent);
  // An agent the config does not list gets the defaults; the implicit scope stands for them.
  const judged = scopes.length > 0 ? scopes : facts.scopes.slice(0, 1);
  return judged.some((scope) => scope.sandbox.mode !== 'all');
}

function approvalsChecks(ctx: AuditContext): Finding[] {
  const facts = auditFacts(ctx);
  const interpreters: string[] = [];
  const launchers: string[] = [];
  for (const [agent, level] of Object.entries(section(facts.approvals.agents))) {
    const entries: unknown[] = Array.isArray(section(level).allowlist) ? level.allowlist : [];
    for (const pattern of entries
      .map((entry) => section(entry).pattern)
      .filter((value): value is string => typeof value === 'string')) {
      const hits = launchersMatching(pattern);
      const named = (kind: string) => hits.filter((hit) => hit.kind === kind).map((hit) => hit.name);
      const where = `agents.${agent}: ${pattern}`;
      if (named('interpreter').length > 0) interpreters.push(`${where} (${names(named('interpreter'))})`);
      else if (named('launcher').length > 0 && unsandboxed(facts, agent))
        launchers.push(`${where} (${names(named('launcher'))})`);
    }
  }
  const open = facts.openInbound.map((entry) => entry.path);
  const severity = open.length > 0 ? 'critical' : 'warn';
  const opened = open.length > 0 ? ` Strangers can write to the assistant (${open.join(', ')}).` : '';
  const findings: Finding[] = [];
  if (interpreters.length > 0) {
    findings.push({
      checkId: 'tools.exec.allowlist_interpreter_without_strict_inline_eval',
      severity,
      title: 'Interpreters on the exec allowlist',
      detail:
        `exec-approvals.json allows ${interpreters.join('; ')}: claw has no inline-eval guard, so \`-c\`/\`-e\` code runs without ` +
        `asking.${opened}`,
      fix:
        'Remove the entries (`claw approvals allowlist remove <pattern> --agent <id>`) and approve scripts by their own path, or ask ' +
        'every time (tools.exec.ask "always").',
      fixable: false,
    });
  }
  if (launchers.length > 0) {
    findings.push({
      checkId: 'tools.exec.allowlist_launcher_unsandboxed',
      severity,
      title: 'Program launchers on the exec allowlist, outside a sandbox',
      detail:
        `exec-approvals.json allows ${launchers.join('; ')} for agents that run exec on the host: each can start any other ` +
        `program (env, xargs, find -exec, git and npm hooks, make), so the allowlist admits anything.${opened}`,
      fix:
        'Remove the entries (`claw approvals allowlist remove <pattern> --agent <id>`) and approve the exact commands with an ' +
        'argPattern, or run these agents in a sandbox (agents.defaults.sandbox.mode "all").',
      fixable: false,
    });
  }
  return findings;
}

export function execAllowlistChecks(ctx: AuditContext): Finding[] {
  return [...safeBinChecks(ctx), ...trustedDirCheck(ctx), ...approvalsChecks(ctx)];
}
