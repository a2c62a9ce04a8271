/**
 * `claw sandbox list | explain | recreate | build`. `explain` answers with the same pure
 * function the tool choke point routes with (resolveSandboxRoute), so what it says is
 * where commands run, and checks the spec with the backend's own `validate` — the checks
 * its `ensure` makes — so it never calls "ok" a bind or workspace the backend refuses.
 * `list` and `recreate` ask the sandbox slot's backend; `build` hands over to the backend
 * plugin's image builder when it offers one.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SLOT_HOLDERS, type Kernel } from '../../../kernel/index.js';
import type { SandboxBackend, SandboxInfo, SandboxSpec } from '../../../sdk/index.js';
import { resolveSandboxRoute } from '../../../host/sandbox-route.js';
import { agentPaths, defaultAgentId } from '../../../sdk/agent/settings.js';
import { checkSandboxMounts } from '../../../host/sandbox-checks.js';
import { bootKernel } from '../boot.js';
import { withProgress } from '../progress.js';
import { printHelp } from '../help.js';
import { CliError, printJson, println, table, usageError, type Io } from '../io.js';
import { parseFlags, unknownCommand } from '../../../sdk/cli.js';

/** The docker helper's script, from source (apps/cli/commands) or from dist/apps/cli/commands. */
const BUILD_SCRIPT =
  ['../../../scripts/build-sandbox-image.sh', '../../../../scripts/build-sandbox-image.sh']
    .map((path) => fileURLToPath(new URL(path, import.meta.url)))
    .find((path) => existsSync(path)) ?? 'scripts/build-sandbox-image.sh (in the claw checkout)';

function flags(args: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  const { values, positionals } = parseFlags(args, options);
  if (positionals.length) throw usageError(`unexpected argument "${positionals[0]}" (see claw sandbox --help)`);
  return values as Record<string, string | boolean | undefined>;
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [sub, ...rest] = args;
  if (help || !sub) {
    printHelp(io, 'sandbox');
    return sub || help ? 0 : 2;
  }
  const kernel = await bootKernel(io, { strictConfig: false });
  try {
    switch (sub) {
      case 'explain':
        return await explain(kernel, flags(rest, { agent: { type: 'string' }, session: { type: 'string' } }), io);
      case 'list':
        return await list(kernel, flags(rest, {}), io);
      case 'recreate':
        return await recreate(
          kernel,
          flags(rest, { all: { type: 'boolean' }, agent: { type: 'string' }, session: { type: 'string' } }),
          io,
        );
      case 'build':
        return await build(kernel, flags(rest, { image: { type: 'string' } }), io);
      default:
        throw unknownCommand('sandbox', sub, ['explain', 'list', 'recreate', 'build']);
    }
  } finally {
    await kernel.stop();
  }
}

async function backendOf(kernel: Kernel): Promise<SandboxBackend> {
  const holder = kernel.config.resolved.plugins?.slots?.sandbox ?? DEFAULT_SLOT_HOLDERS.sandbox;
  if (holder === 'none')
    throw new CliError(
      'no sandbox backend is configured (plugins.slots.sandbox is "none"): set it (e.g. "sandbox-bwrap" or "sandbox-docker")',
    );
  const backend = (await kernel.capabilities.slot('sandbox')) as SandboxBackend | undefined;
  if (!backend) throw new CliError(`the sandbox backend "${holder}" is not available`);
  return backend;
}

async function explain(kernel: Kernel, options: Record<string, string | boolean | undefined>, io: Io): Promise<number> {
  const config = kernel.config.resolved;
  const given = options.session as string | undefined;
  const fromKey = given?.startsWith('agent:') ? given.split(':')[1] : undefined;
  const agentId = (options.agent as string | undefined) ?? fromKey ?? defaultAgentId(config);
  // Short names ("main", "discord:group:x") expand against the agent, as OpenClaw's explain does.
  const sessionKey =
    given === undefined
      ? undefined
      : given.startsWith('agent:') || given === 'global'
        ? given
        : `agent:${agentId}:${given}`;
  const { workspaceDir } = agentPaths(config, agentId, kernel.paths);
  const route = resolveSandboxRoute(config, {
    agentId,
    sessionKey: sessionKey ?? undefined,
    workspaceDir,
    stateDir: kernel.paths.stateDir,
  });
  const effectiveSession = sessionKey ?? route.mainSessionKey;
  const final =
    sessionKey === undefined
      ? resolveSandboxRoute(config, {
          agentId,
          sessionKey: effectiveSession,
          workspaceDir,
          stateDir: kernel.paths.stateDir,
        })
      : route;
  let backendStatus: { ok?: boolean; checked?: false; reason?: string } = {
    ok: false,
    reason: 'no sandbox backend is configured (plugins.slots.sandbox)',
  };
  let backend: SandboxBackend | undefined;
  if (final.backend !== 'none' && !final.sandboxed) {
    // Commands of this session run on the host: the backend's health changes nothing here, and
    // checking it costs a first-use install (dockerode) and a daemon probe.
    backendStatus = { checked: false, reason: 'not checked: this session is not sandboxed' };
  } else if (final.backend !== 'none') {
    try {
      backend = await backendOf(kernel);
      backendStatus = await backend.check();
    } catch (error) {
      backendStatus = { ok: false, reason: (error as Error).message };
    }
  }
  // The backend's own checks; one without them gets the mount checks every bundled backend runs.
  const validate = (spec: SandboxSpec): string | undefined => {
    try {
      if (backend?.validate) backend.validate(spec);
      else checkSandboxMounts(spec, { stateDir: kernel.paths.stateDir });
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const spec = final.spec;
  // Each bind on its own (next to the workspace), so every refused one is named, not only the first.
  const base = spec && validate({ ...spec, binds: [] });
  const binds = (spec?.binds ?? []).map((bind) => {
    const reason = base
      ? `not checked: the sandbox is refused (${base})`
      : spec && validate({ ...spec, binds: [bind] });
    return reason ? { bind, ok: false, reason } : { bind, ok: true };
  });
  const refusal = spec && validate(spec);
  const runsOn = !final.sandboxed
    ? 'host'
    : !backendStatus.ok
      ? 'refused (fail closed: the sandbox backend is unavailable)'
      : refusal
        ? `refused (fail closed: ${refusal})`
        : `sandbox (${final.backend})`;
  const report = {
    agentId: final.agentId,
    sessionKey: final.sessionKey,
    mainSessionKey: final.mainSessionKey,
    mode: final.settings.mode,
    scope: final.settings.scope,
    workspaceAccess: final.settings.workspaceAccess,
    workspaceRoot: final.settings.workspaceRoot,
    sandboxed: final.sandboxed,
    reason: final.reason,
    commandsRunOn: runsOn,
    backend: { id: final.backend, ...backendStatus },
    ...(final.spec
      ? {
          scopeKey: final.spec.scopeKey,
          effectiveHostWorkspaceRoot: final.spec.workspaceRoot,
          workdir: final.spec.workdir,
          network: final.spec.network,
          binds,
          ...(refusal ? { refused: refusal } : {}),
        }
      : {}),
    fixIt: ['agents.defaults.sandbox.mode', `agents.list[id=${final.agentId}].sandbox.mode`, 'plugins.slots.sandbox'],
  };
  if (io.json) {
    printJson(io, report);
    return 0;
  }
  println(io, `Agent ${report.agentId}, session ${report.sessionKey} (main session: ${report.mainSessionKey})`);
  println(io, `  mode ${report.mode}, scope ${report.scope}, workspaceAccess ${report.workspaceAccess}`);
  println(io, `  sandboxed: ${report.sandboxed ? 'yes' : 'no'} — ${report.reason}`);
  println(io, `  exec and file tools run on: ${runsOn}`);
  println(io, `  backend: ${final.backend}${backendStatus.ok === true ? '' : ` (${backendStatus.reason})`}`);
  if (final.spec) {
    println(
      io,
      `  scope key ${final.spec.scopeKey}; host workspace ${final.spec.workspaceRoot} at ${final.spec.workdir} (${final.spec.workspaceAccess}); network ${final.spec.network}`,
    );
    if (base) println(io, `  refused: ${base}`);
    for (const bind of binds) println(io, `  bind ${bind.bind}: ${bind.ok ? 'ok' : bind.reason}`);
  }
  println(io, `  change it with: ${report.fixIt.join(', ')}`);
  return 0;
}

async function list(kernel: Kernel, _options: unknown, io: Io): Promise<number> {
  const sandboxes = await (await backendOf(kernel)).list();
  if (io.json) {
    printJson(io, { sandboxes });
    return 0;
  }
  if (sandboxes.length === 0) {
    println(io, 'No sandboxes.');
    return 0;
  }
  const age = (at?: number) => (at ? `${Math.round((Date.now() - at) / 60_000)}m` : '-');
  println(
    io,
    table(
      sandboxes.map((info) => [
        info.id,
        info.backend,
        info.scopeKey,
        info.agentId,
        info.image ?? '-',
        age(info.createdAt),
        info.configHash ?? '-',
      ]),
      ['ID', 'BACKEND', 'SCOPE', 'AGENT', 'IMAGE', 'AGE', 'CONFIG'],
    ),
  );
  return 0;
}

async function recreate(
  kernel: Kernel,
  options: Record<string, string | boolean | undefined>,
  io: Io,
): Promise<number> {
  const chosen = [options.all ? 'all' : undefined, options.agent, options.session].filter(
    (value) => value !== undefined,
  );
  if (chosen.length !== 1) throw usageError('pass exactly one of --all, --session <key>, --agent <id>');
  const backend = await backendOf(kernel);
  const agent = options.agent as string | undefined;
  const matches = (info: SandboxInfo) =>
    options.all === true ||
    (options.session !== undefined && info.scopeKey === options.session) ||
    (agent !== undefined &&
      (info.agentId === agent || info.scopeKey === `agent:${agent}` || info.scopeKey.startsWith(`agent:${agent}:`)));
  const removed: string[] = [];
  for (const info of (await backend.list()).filter(matches)) {
    await backend.remove(info.id);
    removed.push(info.id);
  }
  if (io.json) printJson(io, { removed });
  else
    println(
      io,
      removed.length === 0
        ? 'No matching sandboxes.'
        : `Removed ${removed.join(', ')}; they are recreated with the current config on next use.`,
    );
  return 0;
}

interface ImageBuilder {
  buildImage(options?: { image?: string }): Promise<string>;
}

async function build(kernel: Kernel, options: Record<string, string | boolean | undefined>, io: Io): Promise<number> {
  const holder = kernel.config.resolved.plugins?.slots?.sandbox;
  // The backend plugin owns how its image is made; this command only finds the builder.
  for (const id of new Set(
    [holder, 'sandbox-docker'].filter((value): value is string => typeof value === 'string' && value !== 'none'),
  )) {
    const service = await kernel.capabilities.find('service', id).catch(() => undefined);
    const builder = service?.api as Partial<ImageBuilder> | undefined;
    if (typeof builder?.buildImage !== 'function') continue;
    const target = options.image ? { image: options.image as string } : {};
    // Tens of seconds (a docker import, dockerode installed on first use): said at once, not after a silence.
    const image = await withProgress(io.stderr, 'Building the sandbox image', () => builder.buildImage!(target), {
      afterMs: 0,
    });
    if (io.json) printJson(io, { image, builtBy: id });
    else println(io, `Built ${image} (${id}).`);
    return 0;
  }
  throw new CliError(
    `no sandbox backend plugin offers an image build here (enable sandbox-docker); or run ${BUILD_SCRIPT}`,
  );
}
