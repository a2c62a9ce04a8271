/** `claw plugins …` */
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { slotHolder, type Kernel, type PluginRecord, type PluginsConfig } from '../../../kernel/index.js';
import { readManifest } from '../../../host/manifest.js';
import { redactConfig } from '../../../sdk/config-redact.js';
import { manifestSlots } from '../../../kernel/plugin-host/manifest.js';
import { baseRecord } from '../../../kernel/plugin-host/resolve.js';
import { installPlugin, type InstallOutcome, type StagedInstall } from '../plugins/install.js';
import { describePlugin, disablePlugin, enablePlugin, forgetPlugin, PluginManageError } from '../plugins/manage.js';
import { ensurePluginRuntimeDeps, progressPrinter } from '../../../host/runtime-deps.js';
import { bootKernel } from '../boot.js';
import { isOpenclawPlugin, NEEDS_PREFIX } from '../../../host/openclaw-plugins.js';
import { editConfig } from '../config-edit.js';
import { printHelp } from '../help.js';
import { CliError, printJson, println, table, truncate, usageError, warn, type Io } from '../io.js';
import { parseFlags, unknownCommand } from '../../../sdk/cli.js';

const STATUS_WORD: Record<PluginRecord['status'], string> = {
  ready: 'on',
  active: 'loaded',
  disabled: 'off',
  failed: 'failed',
};

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [sub, ...rest] = args;
  if (help || !sub) {
    printHelp(io, 'plugins');
    return sub || help ? 0 : 2;
  }
  try {
    switch (sub) {
      case 'list':
      case 'ls':
        return await list(rest, io);
      case 'info':
      case 'inspect':
        return await info(rest, io);
      case 'enable':
        return await toggle(rest, io, true);
      case 'disable':
        return await toggle(rest, io, false);
      case 'install':
        return await install(rest, io);
      case 'uninstall':
      case 'remove':
        return await uninstall(rest, io);
      case 'doctor':
        return await doctor(rest, io);
      default:
        throw unknownCommand('plugins', sub, [
          'list',
          'ls',
          'info',
          'inspect',
          'enable',
          'disable',
          'install',
          'uninstall',
          'remove',
          'doctor',
        ]);
    }
  } catch (error) {
    if (error instanceof PluginManageError) throw new CliError(error.message);
    throw error;
  }
}

function flags<T extends Record<string, { type: 'boolean' | 'string' }>>(args: string[], options: T) {
  return parseFlags(args, options);
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = flags(args, { enabled: { type: 'boolean' }, verbose: { type: 'boolean' } });
  const kernel = await bootKernel(io, { strictConfig: false });
  // OpenClaw plugins declare by registering, and the gateway loads them as it starts: load
  // them here too, so one whose module cannot be run (no usable export) is listed as failed.
  await kernel.plugins.activateAll(isOpenclawPlugin);
  let records = [...kernel.plugins.list()];
  if (values.enabled) records = records.filter((record) => record.enabled);
  if (io.json) {
    printJson(io, {
      plugins: records.map(describePlugin),
      diagnostics: kernel.plugins.diagnostics,
    });
    return 0;
  }
  if (records.length === 0) {
    println(io, 'No plugins found.');
    return 0;
  }
  println(
    io,
    table(
      records.map((record) => [
        record.id,
        STATUS_WORD[record.status],
        record.origin,
        record.version ?? '',
        values.verbose ? record.reason : truncate(record.description ?? '', 60),
      ]),
      ['ID', 'STATUS', 'ORIGIN', 'VERSION', values.verbose ? 'WHY' : 'DESCRIPTION'],
    ),
  );
  const failed = records.filter((record) => record.status === 'failed');
  if (failed.length > 0) {
    println(io, '\nFailed:');
    for (const record of failed) println(io, `  ${record.id}: ${record.error}`);
  }
  for (const diagnostic of kernel.plugins.diagnostics) warn(io, diagnostic.message);
  return 0;
}

function findRecord(kernel: Kernel, id: string | undefined): PluginRecord {
  if (!id) throw usageError('missing plugin id');
  const record = kernel.plugins.get(id);
  if (!record) throw new CliError(`no plugin "${id}" is installed (see claw plugins list)`);
  return record;
}

async function info(args: string[], io: Io): Promise<number> {
  const { positionals } = flags(args, {});
  const kernel = await bootKernel(io, { strictConfig: false });
  const record = findRecord(kernel, positionals[0]);
  const sensitive = new Set(
    Object.entries(record.manifest?.uiHints ?? {})
      .filter(([, hint]) => hint.sensitive)
      .map(([key]) => key),
  );
  const config = redactConfig(record.config ?? {}, (path) => typeof path[0] === 'string' && sensitive.has(path[0]));
  const detail = {
    ...describePlugin(record),
    entry: record.entryPath ?? null,
    install: record.install ?? null,
    config,
    configSchema: record.manifest?.configSchema ?? null,
  };
  if (io.json) {
    printJson(io, detail);
    return 0;
  }
  const lines = [
    `${record.name} (${record.id})${record.version ? ` ${record.version}` : ''}`,
    record.description ? `  ${record.description}` : undefined,
    `  status:   ${STATUS_WORD[record.status]} — ${record.status === 'failed' ? record.error : record.reason}`,
    `  origin:   ${record.origin}${record.dir ? ` (${record.dir})` : ''}`,
    record.entryPath ? `  entry:    ${record.entryPath}` : undefined,
    record.install
      ? `  install:  ${record.install.source} ${record.install.spec} at ${record.install.installedAt}`
      : undefined,
    ...Object.entries(detail.capabilities).map(([field, names]) => `  ${`${field}:`.padEnd(10)}${names.join(', ')}`),
    `  config:   ${JSON.stringify(config)}`,
    ...record.warnings.map((warning) => `  warning:  ${warning}`),
  ];
  println(io, lines.filter((line) => line !== undefined).join('\n'));
  return 0;
}

async function toggle(args: string[], io: Io, on: boolean): Promise<number> {
  const { positionals } = flags(args, {});
  if (positionals.length === 0) throw usageError(`usage: claw plugins ${on ? 'enable' : 'disable'} <id...>`);
  const { value: notes, after } = await editConfig(io, (raw, kernel) =>
    positionals.flatMap((id) => {
      const record = findRecord(kernel, id);
      return on ? enablePlugin(raw, record) : disablePlugin(raw, record);
    }),
  );
  if (on) {
    for (const id of positionals) {
      const record = after.plugins.get(id)!;
      if (record.status === 'failed') throw new CliError(`cannot enable "${id}": ${record.error}`);
      if (!record.enabled) throw new CliError(`"${id}" is still off: ${record.reason}`);
      // Heavy packages the plugin declares (runtimeDependencies) install now, not with claw.
      await ensurePluginRuntimeDeps(id, record.manifest, {
        stateDir: after.paths.stateDir,
        env: { ...process.env, ...io.env },
        onProgress: progressPrinter(io.stderr),
      }).catch((error: unknown) => {
        throw new CliError(`enabled ${id}, but ${error instanceof Error ? error.message : String(error)}`);
      });
    }
  }
  if (io.json) {
    printJson(io, { ok: true, [on ? 'enabled' : 'disabled']: positionals, notes });
  } else {
    for (const id of positionals) println(io, `${on ? 'Enabled' : 'Disabled'} ${id}.`);
    for (const note of notes) println(io, `  ${note}`);
  }
  return 0;
}

async function install(args: string[], io: Io): Promise<number> {
  const { positionals, values } = flags(args, {
    force: { type: 'boolean' },
    link: { type: 'boolean' },
    enable: { type: 'boolean' },
  });
  const spec = positionals[0];
  if (!spec || positionals.length > 1)
    throw usageError('usage: claw plugins install <dir | file.tgz | npm-spec> [--force] [--link] [--enable]');
  if (values.link) return link(spec, io, values.enable === true);
  const progress = (line: string) => {
    if (!io.json) io.stderr.write(`${line}\n`);
  };
  let staged: StagedInstall | undefined;
  let outcome: InstallOutcome;
  try {
    const edit = await editConfig(
      io,
      async (raw, kernel) => {
        staged = await installPlugin({
          spec,
          stateDir: kernel.paths.stateDir,
          force: values.force,
          enable: values.enable,
          raw,
          records: kernel.plugins.list(),
          env: io.env as NodeJS.ProcessEnv,
          beforeInstall: (event) => kernel.hooks.runModifying('before_install', event),
          progress: (step) => progress(`[${step.index}/${step.total}] ${step.label}…`),
        });
        return staged.outcome;
      },
      // Files move into place only once the config that records them has validated; until
      // then the check loads the plugin from its staging folder (a new slot holder must exist).
      { beforeWrite: () => staged!.commit(), pluginDirs: () => [staged!.stagedDir] },
    );
    outcome = edit.value;
  } finally {
    staged?.discard();
  }
  const loaded = outcome.enabled ? await tryRegister(io, outcome.id) : undefined;
  if (io.json) {
    printJson(io, {
      ok: true,
      ...outcome,
      ...(loaded ? { loaded: loaded.ok, needs: loaded.needs, ...(loaded.error ? { error: loaded.error } : {}) } : {}),
    });
    return 0;
  }
  println(io, `Installed ${outcome.id}${outcome.version ? ` ${outcome.version}` : ''} → ${outcome.dir}`);
  if (outcome.dependenciesInstalled > 0) println(io, `  ${outcome.dependenciesInstalled} dependencies installed`);
  if (!loaded) println(io, '  installed but off');
  else if (loaded.error) println(io, `  installed, but register() failed: ${loaded.error}`);
  else if (loaded.needs.length > 0)
    println(io, `  installed, but needs: ${loaded.needs.join(', ')} (see claw plugins doctor)`);
  else println(io, '  enabled');
  for (const note of outcome.notes) println(io, `  ${note}`);
  return 0;
}

/**
 * "Enabled" is claimed only once the plugin's register() has run: load it the way the
 * gateway will, and report a failure or the APIs it asked for that claw lacks.
 */
async function tryRegister(io: Io, id: string): Promise<{ ok: boolean; needs: string[]; error?: string }> {
  const kernel = await bootKernel(io, { strictConfig: false });
  await kernel.plugins.activate(id).catch(() => {});
  const record = kernel.plugins.get(id);
  if (!record || record.status === 'failed')
    return { ok: false, needs: [], error: record?.error ?? 'not found after install' };
  const needs = record.warnings
    .filter((warning) => warning.startsWith(NEEDS_PREFIX))
    .map((warning) => warning.slice(NEEDS_PREFIX.length).split(' ')[0]!);
  return { ok: needs.length === 0, needs: [...new Set(needs)] };
}

/**
 * `--link`: use the directory in place through plugins.load.paths (for plugin development).
 * A plugin with a `kind` takes its slot only with `--enable`, as with a copied install.
 */
async function link(spec: string, io: Io, enable: boolean): Promise<number> {
  const dir = resolve(spec);
  if (!existsSync(dir)) throw new CliError(`directory "${spec}" not found`);
  const manifest = readManifest(dir);
  if (!manifest.ok) throw new CliError(`refusing to link "${spec}": ${manifest.error}`);
  const id = manifest.manifest.id;
  const { value: notes, after } = await editConfig(io, (raw, kernel) => {
    const existing = kernel.plugins.get(id);
    if (existing?.manifest && existing.dir !== dir) {
      throw new CliError(
        `plugin id "${id}" is already taken by the ${existing.origin} plugin at ${existing.dir ?? '(inline)'}`,
      );
    }
    const plugins = (raw.plugins ??= {}) as { load?: { paths?: string[] } };
    plugins.load ??= {};
    plugins.load.paths ??= [];
    if (!plugins.load.paths.includes(dir)) plugins.load.paths.push(dir);
    const notes = [`added ${dir} to plugins.load.paths`];
    const slots = manifestSlots(manifest.manifest);
    if (slots.length > 0) {
      if (enable) notes.push(...enablePlugin(raw, baseRecord(manifest.manifest, 'config', dir)));
      else {
        const holders = slots
          .map((slot) => `the ${slot} slot is held by "${slotHolder(raw.plugins as PluginsConfig, slot)}"`)
          .join(', ');
        if (slots.some((slot) => slotHolder(raw.plugins as PluginsConfig, slot) !== id)) {
          notes.push(`not switched on (${holders}); run \`claw plugins enable ${id}\` to use it`);
        }
      }
      return notes;
    }
    const entries = ((raw.plugins as Record<string, any>).entries ??= {}) as Record<string, { enabled?: boolean }>;
    entries[id] = { ...entries[id], enabled: true };
    return notes;
  });
  const record = after.plugins.get(id);
  if (record?.status === 'failed') throw new CliError(`linked "${id}" but it fails: ${record.error}`);
  if (io.json) printJson(io, { ok: true, id, dir, notes });
  else {
    println(io, `Linked ${id} → ${dir}`);
    for (const note of notes) println(io, `  ${note}`);
  }
  return 0;
}

async function uninstall(args: string[], io: Io): Promise<number> {
  const { positionals, values } = flags(args, { 'keep-files': { type: 'boolean' } });
  const id = positionals[0];
  if (!id) throw usageError('usage: claw plugins uninstall <id> [--keep-files]');
  let removeDir: string | undefined;
  await editConfig(io, (raw, kernel) => {
    const record = findRecord(kernel, id);
    if (record.origin === 'bundled')
      throw new CliError(`"${id}" is bundled with claw and cannot be uninstalled; use claw plugins disable ${id}`);
    const linked = record.origin === 'config' && record.dir ? record.dir : undefined;
    if (record.origin !== 'global' && !linked) {
      throw new CliError(
        `"${id}" was not installed by claw (it comes from ${record.origin} at ${record.dir}); remove it there`,
      );
    }
    forgetPlugin(raw, id, linked);
    if (record.origin === 'global' && !values['keep-files']) removeDir = record.dir;
  });
  if (removeDir) rmSync(removeDir, { recursive: true, force: true });
  if (io.json) printJson(io, { ok: true, uninstalled: id, removed: removeDir ?? null });
  else println(io, `Uninstalled ${id}${removeDir ? ` (removed ${removeDir})` : ''}.`);
  return 0;
}

async function doctor(args: string[], io: Io): Promise<number> {
  flags(args, {});
  const kernel = await bootKernel(io, { strictConfig: false });
  // Loading every enabled plugin is what surfaces import and register() failures.
  await kernel.plugins.activateAll();
  const records = kernel.plugins.list();
  const failed = records.filter((record) => record.status === 'failed');
  const issues = kernel.issues();
  const errors = issues.filter((issue) => issue.level === 'error');
  const ok = failed.length === 0 && errors.length === 0;
  if (io.json) {
    printJson(io, {
      ok,
      failed: failed.map((record) => ({ id: record.id, dir: record.dir ?? null, error: record.error })),
      issues,
      warnings: records.flatMap((record) => record.warnings.map((message) => ({ id: record.id, message }))),
      // OpenClaw plugins and the OpenClaw APIs each asked for that claw does not have.
      openclaw: records.filter(isOpenclawPlugin).map((record) => ({
        id: record.id,
        missing: record.warnings
          .filter((warning) => warning.startsWith(NEEDS_PREFIX))
          .map((warning) => warning.slice(NEEDS_PREFIX.length)),
      })),
      diagnostics: kernel.plugins.diagnostics,
    });
    return ok ? 0 : 1;
  }
  const loaded = records.filter((record) => record.status === 'active').length;
  println(io, `${records.length} plugins found, ${loaded} loaded, ${failed.length} failed.`);
  for (const record of failed) println(io, `  ✗ ${record.id}: ${record.error}`);
  for (const issue of issues) {
    println(
      io,
      `  ${issue.level === 'error' ? '✗' : '!'} config ${issue.path}: ${issue.message}${issue.owner === 'kernel' ? '' : ` (plugin ${issue.owner})`}`,
    );
  }
  for (const record of records) for (const warning of record.warnings) println(io, `  ! ${record.id}: ${warning}`);
  for (const record of records.filter(isOpenclawPlugin))
    println(io, `  i ${record.id}: OpenClaw plugin, runs through claw's OpenClaw API adapter`);
  for (const diagnostic of kernel.plugins.diagnostics) println(io, `  ! ${diagnostic.message}`);
  if (ok) println(io, 'No problems found.');
  return ok ? 0 : 1;
}
