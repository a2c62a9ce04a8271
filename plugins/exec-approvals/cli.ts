/**
 * `claw approvals` (alias `claw exec-approvals`), OpenClaw's CLI: get / set / allowlist
 * edit the approvals document on this host (or the gateway's with --gateway); pending and
 * resolve talk to the running gateway, where pending requests live.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { CliContext, PluginApi } from '../../sdk/index.js';
import { parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';
import {
  addAllowlistEntry,
  approvalsFile,
  parseDocument,
  removeAllowlistPattern,
  updateDocument,
  writeDocument,
  type ApprovalsDocument,
} from './file.js';
import { policyView, type PolicyView } from './policy.js';
import { DECISIONS, type Decision, type ExecApprovalService, type PendingApproval } from './service.js';

export const APPROVALS_HELP = `Usage: claw approvals get [--gateway] [--json]             policy: requested (tools.exec), host file, effective
       claw approvals set --file <path> | --stdin [--gateway]   replace the approvals document (JSON5)
       claw approvals allowlist add|remove <pattern> [--agent <id>] [--gateway]   (agent default "*")
       claw approvals pending [--json]                      pending requests on the running gateway
       claw approvals resolve <id> <allow-once|allow-always|deny> [--reason <text>]
Gateway options: --url, --token, --timeout <ms>`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  gateway: { type: 'boolean' },
  file: { type: 'string' },
  stdin: { type: 'boolean' },
  agent: { type: 'string' },
  reason: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>['values'];

function readStdin(): string {
  return readFileSync(0, 'utf8');
}

function show(ctx: CliContext, values: Values, view: PolicyView): number {
  if (values.json) {
    ctx.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `Approvals file: ${view.path}`,
    `Requested (tools.exec): ${JSON.stringify(view.requested)}`,
    `Host defaults: ${JSON.stringify(view.file.defaults ?? {})}`,
    'Effective:',
  ];
  for (const [agent, policy] of Object.entries(view.effective)) {
    lines.push(
      `  ${agent}: security=${policy.security} ask=${policy.ask} askFallback=${policy.askFallback}${policy.allowlist.length ? ` allowlist=${policy.allowlist.join(', ')}` : ''}`,
    );
  }
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

function formatPending(approvals: PendingApproval[]): string {
  if (approvals.length === 0) return 'No pending approvals.';
  const now = Date.now();
  return approvals
    .map((item) => {
      const session = item.request.sessionKey ? ` ${item.request.sessionKey}` : '';
      const expires = Math.max(0, Math.round((item.expiresAtMs - now) / 1000));
      const head = `${item.id}  exec  ${item.request.agentId}${session}  expires in ${expires}s`;
      const { command, cwd, host, nodeId } = item.request;
      const where = host === 'node' ? ` on node ${nodeId ?? '(unknown)'}${cwd ? ` in ${cwd}` : ''}` : ` in ${cwd}`;
      const lines = [head, `    ${JSON.stringify(command)}${where}`];
      const env = Object.entries(item.request.env ?? {});
      if (env.length > 0)
        lines.push(`    env: ${env.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(' ')}`);
      for (const warning of item.request.warnings ?? []) lines.push(`    warning: ${warning}`);
      return lines.join('\n');
    })
    .join('\n');
}

export async function approvalsCommand(
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
  service: ExecApprovalService,
): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  const [action = 'get', ...rest] = positionals;
  const stateDir = api.kernel.paths.stateDir;
  const localPath = approvalsFile(stateDir);
  const write = (text: string) => ctx.stdout.write(`${text}\n`);

  if (action === 'get') {
    if (!values.gateway) return show(ctx, values, policyView(api.kernel.config(), localPath, service.document()));
    return show(
      ctx,
      values,
      (await ctx.gateway.connect(values, (client) => client.request('exec.approvals.get', {}))) as PolicyView,
    );
  }

  if (action === 'set') {
    if (!!values.file === !!values.stdin)
      throw new UsageError('approvals set needs exactly one of --file <path> or --stdin');
    const source = values.file ?? 'stdin';
    const doc = parseDocument(values.file ? readFileSync(values.file, 'utf8') : readStdin(), source);
    if (values.gateway)
      await ctx.gateway.connect(values, (client) =>
        client.request('exec.approvals.set', { file: doc, idempotencyKey: randomUUID() }),
      );
    else writeDocument(stateDir, doc);
    write(
      values.json
        ? JSON.stringify(doc, null, 2)
        : `Wrote ${values.gateway ? 'the gateway approvals document' : localPath}.`,
    );
    return 0;
  }

  if (action === 'allowlist') {
    const [verb, pattern] = rest;
    if ((verb !== 'add' && verb !== 'remove') || !pattern)
      throw new UsageError('usage: claw approvals allowlist add|remove <pattern> [--agent <id>]');
    const agent = values.agent ?? '*';
    const edit = (doc: ApprovalsDocument) =>
      verb === 'add' ? addAllowlistEntry(doc, agent, { pattern }) : removeAllowlistPattern(doc, agent, pattern);
    let changed = false;
    let doc: ApprovalsDocument;
    if (values.gateway) {
      const current = (await ctx.gateway.connect(values, (client) => client.request('exec.approvals.get', {}))) as {
        file: unknown;
        hash?: string;
      };
      doc = parseDocument(JSON.stringify(current.file), 'the gateway approvals document');
      changed = edit(doc);
      // baseHash: an edit made on the gateway meanwhile is not overwritten (the set is refused).
      const guard = current.hash ? { baseHash: current.hash } : {};
      if (changed)
        await ctx.gateway.connect(values, (client) =>
          client.request('exec.approvals.set', { file: doc, ...guard, idempotencyKey: randomUUID() }),
        );
    } else {
      doc = await updateDocument(stateDir, (current) => (changed = edit(current)));
    }
    write(
      values.json
        ? JSON.stringify(doc, null, 2)
        : changed
          ? `${verb === 'add' ? 'Added' : 'Removed'} ${pattern} (agent ${agent}).`
          : `Nothing to change: ${pattern} is ${verb === 'add' ? 'already' : 'not'} on agent ${agent}'s allowlist.`,
    );
    // Said at the moment it is allowed, on stderr so --json output stays parseable.
    const launchers = verb === 'add' ? await service.launchers() : undefined;
    if (launchers && (launchers.isLauncher(pattern) || /[*?]/.test(basename(pattern)))) {
      const what = launchers.isLauncher(pattern)
        ? launchers.warning(pattern)
        : `${pattern} also matches launchers (git, sh, node, make, …), which can run anything`;
      ctx.stderr.write(
        `Warning: ${what}. Prefer running it in a sandbox, or ask for each command (tools.exec.ask on-miss).\n`,
      );
    }
    return 0;
  }

  if (action === 'pending') {
    const approvals = (await ctx.gateway.connect(values, (client) =>
      client.request('exec.approval.list', {}),
    )) as PendingApproval[];
    write(values.json ? JSON.stringify({ approvals }, null, 2) : formatPending(approvals));
    return 0;
  }

  if (action === 'resolve') {
    const [id, decision] = rest;
    if (!id || !DECISIONS.includes(decision as Decision))
      throw new UsageError(`usage: claw approvals resolve <id> <${DECISIONS.join('|')}>`);
    const result = (await ctx.gateway.connect(values, (client) =>
      client.request('exec.approval.resolve', { id, decision, idempotencyKey: randomUUID() }),
    )) as { alreadyResolved?: boolean };
    write(
      result.alreadyResolved
        ? `${id}: already resolved (same decision).`
        : `Resolved ${id}: ${decision}${values.reason ? ` (note: ${values.reason})` : ''}.`,
    );
    return 0;
  }
  throw unknownCommand('approvals', action, ['get', 'set', 'allowlist', 'pending', 'resolve']);
}
