/**
 * `claw sessions archive <key...>`: as OpenClaw's, through the running gateway's
 * `sessions.patch {archived: true}`, so a session a run is using is archived by the process
 * that owns it. Already archived keys succeed without a change; `--dry-run` only checks.
 */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags as parse, UsageError, type GatewayFlags } from '../../sdk/cli.js';
import { normalizeAgentId } from '../../sdk/agent/index.js';

interface Row {
  key: string;
  sessionId?: string;
  archived?: boolean;
}

type Status = 'archived' | 'already_archived' | 'would_archive' | 'not_found' | 'failed';

export async function archiveCommand(argv: string[], ctx: CliContext, mainKey: (agentId: string) => string) {
  const { values, positionals } = parse(argv, {
    help: { type: 'boolean' },
    json: { type: 'boolean' },
    agent: { type: 'string' },
    'dry-run': { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
    timeout: { type: 'string' },
  });
  const keys = positionals.map((key) => key.trim());
  if (keys.length === 0 || keys.some((key) => !key))
    throw new UsageError('name the sessions to archive: claw sessions archive <key> [<key>...]');
  const agentId = values.agent === undefined ? undefined : normalizeAgentId(values.agent as string);
  const flags: GatewayFlags = {
    url: values.url as string | undefined,
    token: values.token as string | undefined,
    timeout: values.timeout as string | undefined,
  };
  const results = await ctx.gateway.connect(flags, async (gateway) => {
    const listed = await gateway.request<{ sessions: Row[] }>('sessions.list', {
      archived: 'all',
      ...(agentId ? { agentId } : {}),
    });
    const rows = new Map(listed.sessions.map((row) => [row.key, row]));
    const out: Array<{ key: string; ok: boolean; status: Status; error?: string }> = [];
    for (const key of keys) {
      const row = rows.get(key);
      if (!row) out.push({ key, ok: false, status: 'not_found', error: 'no such session' });
      else if (row.archived) out.push({ key, ok: true, status: 'already_archived' });
      else if (values['dry-run']) {
        const main = key === mainKey(agentId ?? key.split(':')[1] ?? '');
        out.push(
          main
            ? { key, ok: false, status: 'failed', error: "an agent's main session is not archived" }
            : { key, ok: true, status: 'would_archive' },
        );
      } else {
        try {
          await gateway.request('sessions.patch', {
            key,
            ...(agentId ? { agentId } : {}),
            ...(row.sessionId ? { expectedSessionId: row.sessionId } : {}),
            archived: true,
          });
          out.push({ key, ok: true, status: 'archived' });
        } catch (error) {
          out.push({ key, ok: false, status: 'failed', error: (error as Error).message });
        }
      }
    }
    return out;
  });
  const ok = results.every((result) => result.ok);
  if (values.json) {
    ctx.stdout.write(
      `${JSON.stringify({ ok, operation: 'archive', dryRun: Boolean(values['dry-run']), results }, null, 2)}\n`,
    );
    return ok ? 0 : 1;
  }
  for (const result of results) {
    if (result.status === 'archived') ctx.stdout.write(`Archived ${result.key}.\n`);
    else if (result.status === 'already_archived') ctx.stdout.write(`${result.key} was already archived.\n`);
    else if (result.status === 'would_archive') ctx.stdout.write(`[dry-run] archive session ${result.key}\n`);
    else ctx.stderr.write(`archive ${result.key}: ${result.error}\n`);
  }
  return ok ? 0 : 1;
}
