/**
 * Sandbox settings (`agents.defaults.sandbox`, `agents.list[].sandbox`): mounts that hand
 * the sandbox the host's control surfaces, networks that leave its isolation, and docker
 * settings written down while no session is sandboxed. Binds are judged by the same rules
 * the backends apply (host/sandbox-checks.ts), so what the audit calls dangerous is what a
 * backend would refuse when the sandbox starts.
 */
import { isAbsolute } from 'node:path';
import { validateBind } from '../../../../host/sandbox-checks.js';
import { auditFacts, listedAgents } from './facts.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

function dockerSections(ctx: AuditContext): Array<[string, AnyRecord]> {
  const defaults = section(section(section(ctx.config.agents).defaults).sandbox).docker;
  const agents = listedAgents(ctx.config)
    .filter((agent) => section(agent.sandbox).docker !== undefined)
    .map((agent): [string, AnyRecord] => [
      `agents.list.${agent.id}.sandbox.docker`,
      section(section(agent.sandbox).docker),
    ]);
  return [
    ...(defaults !== undefined ? [['agents.defaults.sandbox.docker', section(defaults)] as [string, AnyRecord]] : []),
    ...agents,
  ];
}

function bindChecks(ctx: AuditContext, docker: Array<[string, AnyRecord]>): Finding[] {
  const findings: Finding[] = [];
  for (const [base, settings] of docker) {
    const binds: unknown[] = Array.isArray(settings.binds) ? settings.binds : [];
    for (const bind of binds.filter((value): value is string => typeof value === 'string')) {
      const source = bind.split(':')[0] ?? '';
      if (!isAbsolute(source)) {
        findings.push({
          checkId: 'sandbox.bind_mount_non_absolute',
          severity: 'warn',
          title: 'Sandbox mount with a relative host path',
          detail:
            `${base}.binds has "${bind}": its host path "${source}" depends on the directory the gateway starts in, and the ` +
            `sandbox refuses to start with it.`,
          fix: `Write the host path out in full, e.g. "/home/me/project:/project:ro".`,
          fixable: false,
        });
        continue;
      }
      try {
        validateBind(bind, { stateDir: ctx.stateDir, home: ctx.env.HOME });
      } catch (error) {
        findings.push({
          checkId: 'sandbox.dangerous_bind_mount',
          severity: 'critical',
          title: 'Sandbox mount exposes the host',
          detail:
            `${base}.binds has "${bind}": ${(error as Error).message.replace(/^sandbox bind "[^"]*" (is refused: )?/, '')}. ` +
            `Sandboxed sessions would see (and could change) it; claw refuses to start such a sandbox.`,
          fix: `Remove "${bind}" from ${base}.binds; mount a project folder instead.`,
          fixable: false,
        });
      }
    }
  }
  return findings;
}

function networkChecks(docker: Array<[string, AnyRecord]>): Finding[] {
  return docker.flatMap(([base, settings]) => {
    const network = typeof settings.network === 'string' ? settings.network.trim().toLowerCase() : '';
    if (network !== 'host' && !network.startsWith('container:')) return [];
    return [
      {
        checkId: 'sandbox.dangerous_network_mode',
        severity: 'critical' as const,
        title: 'Sandbox shares a network namespace it should not',
        detail:
          `${base}.network is "${settings.network}": ` +
          (network === 'host'
            ? "sandboxed commands use the host's network, its loopback services (the gateway included) and its addresses."
            : "sandboxed commands join another container's network namespace."),
        fix: `Set ${base}.network to "none" (the default) or a dedicated bridge network.`,
        fixable: false,
      },
    ];
  });
}

/** Docker settings that no agent uses: a sign the sandbox the owner thinks is on is not. */
function unusedDockerCheck(ctx: AuditContext, docker: Array<[string, AnyRecord]>): Finding[] {
  const scopes = auditFacts(ctx).scopes;
  const anySandboxed = scopes.some((scope) => scope.sandbox.mode !== 'off');
  const unused = docker
    .filter(([, settings]) => Object.values(settings).some((value) => value !== undefined))
    .filter(([base]) => {
      const agent = /^agents\.list\.([^.]+)\./.exec(base)?.[1];
      return agent ? scopes.find((scope) => scope.id === agent)?.sandbox.mode === 'off' : !anySandboxed;
    })
    .map(([base]) => base);
  if (unused.length === 0) return [];
  return [
    {
      checkId: 'sandbox.docker_config_mode_off',
      severity: 'warn',
      title: 'Sandbox settings with the sandbox off',
      detail:
        `${unused.join(', ')} ${unused.length > 1 ? 'are' : 'is'} configured, but sandbox mode is "off" there: no session runs in a ` +
        `sandbox, every tool runs on the host.`,
      fix: 'Set agents.defaults.sandbox.mode to "non-main" or "all" (per agent: agents.list[].sandbox.mode), or remove the unused settings.',
      fixable: false,
    },
  ];
}

export function sandboxChecks(ctx: AuditContext): Finding[] {
  const docker = dockerSections(ctx);
  return [...bindChecks(ctx, docker), ...networkChecks(docker), ...unusedDockerCheck(ctx, docker)];
}
