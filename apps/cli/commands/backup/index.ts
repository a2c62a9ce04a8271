/**
 * `claw backup create|verify|restore`: host-level, like reset and uninstall — they work on
 * the files of the state dir without booting plugins, so a config too broken to load can
 * still be saved, checked and put back.
 */
import { homedir } from 'node:os';
import { printHelp } from '../../help.js';
import { CliError, printJson, println, usageError, warn, type Io } from '../../io.js';
import { locations, runningGateway } from '../maintenance/locations.js';
import { flags } from '../maintenance/shared.js';
import { BackupError, createBackup, restoreBackup, verifyArchive, type BackupManifest } from './archive.js';
import { unknownCommand } from '../../../../sdk/cli.js';

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [action, ...rest] = args;
  if (help || !action) {
    printHelp(io, 'backup');
    return help ? 0 : 2;
  }
  try {
    switch (action) {
      case 'create':
        return await create(rest, io);
      case 'verify':
        return await verify(rest, io);
      case 'restore':
        return await restore(rest, io);
      default:
        throw unknownCommand('backup', action, ['create', 'verify', 'restore']);
    }
  } catch (error) {
    if (error instanceof BackupError) throw new CliError(error.message);
    throw error;
  }
}

async function create(args: string[], io: Io): Promise<number> {
  const { values, positionals } = flags(args, {
    output: { type: 'string' },
    'no-include-workspace': { type: 'boolean' },
    'only-config': { type: 'boolean' },
    'include-logs': { type: 'boolean' },
    verify: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length > 0) throw usageError(`unexpected argument "${positionals[0]}" (see claw backup --help)`);
  const locs = locations(io.env);
  const gateway = runningGateway(locs.stateDir);
  if (gateway && !values['dry-run'] && !values['only-config'])
    warn(
      io,
      `a gateway is running (pid ${gateway.pid}): files it writes during the backup may be caught mid-change; stop it for an exact copy`,
    );
  const result = await createBackup(locs, {
    output: values.output,
    includeWorkspace: !values['no-include-workspace'],
    onlyConfig: values['only-config'] === true,
    includeLogs: values['include-logs'] === true,
    dryRun: values['dry-run'] === true,
    cwd: process.cwd(),
    home: io.env.HOME?.trim() || homedir(),
  });
  let verified: string[] | undefined;
  if (values.verify && !values['dry-run']) verified = (await verifyArchive(result.archive)).problems;
  const files = result.manifest.entries.filter((entry) => entry.type === 'file');
  const size = files.reduce((sum, entry) => sum + (entry.size ?? 0), 0);
  if (io.json) {
    printJson(io, {
      ok: verified === undefined || verified.length === 0,
      archive: result.archive,
      dryRun: values['dry-run'] === true,
      assets: result.manifest.assets,
      files: files.length,
      bytes: size,
      archiveBytes: result.bytes,
      excluded: result.manifest.excluded,
      skipped: result.manifest.skipped,
      ...(verified ? { verified: verified.length === 0, problems: verified } : {}),
    });
  } else {
    println(io, `${values['dry-run'] ? 'Would write' : 'Wrote'} ${result.archive}`);
    for (const line of assetLines(result.manifest)) println(io, line);
    println(
      io,
      `  ${files.length} files, ${size} bytes${result.bytes !== undefined ? ` (${result.bytes} compressed)` : ''}`,
    );
    if (result.manifest.excluded.length > 0) println(io, `  Left out: ${result.manifest.excluded.join(', ')}`);
    for (const skipped of result.manifest.skipped) warn(io, `not archived: ${skipped.path} (${skipped.reason})`);
    if (verified)
      println(io, verified.length === 0 ? 'Verified: every entry matches the manifest.' : 'Verification FAILED:');
    for (const problem of verified ?? []) println(io, `  ${problem}`);
    println(io, 'The archive holds credentials and tokens: keep it as private as the state dir.');
  }
  return verified && verified.length > 0 ? 1 : 0;
}

function assetLines(manifest: BackupManifest): string[] {
  return manifest.assets.map((asset) => `  ${asset.kind.padEnd(9)} ${asset.sourcePath}`);
}

async function verify(args: string[], io: Io): Promise<number> {
  const { positionals } = flags(args, {});
  if (positionals.length !== 1) throw usageError('usage: claw backup verify <archive>');
  const archive = positionals[0]!;
  const result = await verifyArchive(archive);
  const ok = result.problems.length === 0;
  if (io.json) {
    printJson(io, {
      ok,
      archive,
      files: result.files,
      bytes: result.bytes,
      createdAt: result.manifest?.createdAt,
      assets: result.manifest?.assets,
      problems: result.problems,
    });
  } else if (ok) {
    println(io, `${archive}: OK — ${result.files} files, ${result.bytes} bytes, made ${result.manifest!.createdAt}`);
    for (const line of assetLines(result.manifest!)) println(io, line);
  } else {
    io.stderr.write(`${archive}: verification FAILED\n${result.problems.map((problem) => `  ${problem}\n`).join('')}`);
  }
  return ok ? 0 : 1;
}

async function restore(args: string[], io: Io): Promise<number> {
  const { values, positionals } = flags(args, {
    target: { type: 'string' },
    force: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length !== 1)
    throw usageError('usage: claw backup restore <archive> [--target <dir>] [--force] [--dry-run]');
  const { plans } = await restoreBackup(positionals[0]!, {
    target: values.target,
    force: values.force === true,
    dryRun: values['dry-run'] === true,
  });
  if (io.json) {
    printJson(io, {
      ok: true,
      dryRun: values['dry-run'] === true,
      restored: plans.map((plan) => ({
        kind: plan.asset.kind,
        destination: plan.destination,
        replaced: plan.replaces,
      })),
    });
    return 0;
  }
  println(io, values['dry-run'] ? 'Would restore:' : 'Restored:');
  for (const plan of plans)
    println(
      io,
      `  ${plan.asset.kind.padEnd(9)} ${plan.destination}${plan.replaces ? ' (replaced what was there)' : ''}`,
    );
  if (!values['dry-run'] && !values.target) println(io, 'Run `claw doctor` before starting the gateway again.');
  return 0;
}
