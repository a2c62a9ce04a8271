/**
 * `claw security audit [--deep] [--fix] [--json]`: checks config, file permissions and
 * plugins for the mistakes that expose an assistant, with OpenClaw's checkIds. The plain
 * audit reads config and disk only; --deep also asks the running gateway; --fix applies the
 * safe remedies and reports what is left. Exit code 1 while a critical finding remains.
 */
import { clawVersion } from '../../../../sdk/version.js';
import { bootKernel } from '../../boot.js';
import { printHelp } from '../../help.js';
import { CliError, usageError, type Io } from '../../io.js';
import { applyFixes, type FixOutcome } from './fix.js';
import { probeGateway, type ProbeReport } from './probe.js';
import { runChecks } from './registry.js';
import { printAudit, sortFindings, summarize } from './report.js';
import type { AuditContext } from './types.js';
import { parseFlags, unknownCommand } from '../../../../sdk/cli.js';

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [sub, ...rest] = args;
  if (help || !sub) {
    printHelp(io, 'security');
    return sub || help ? 0 : 2;
  }
  if (sub !== 'audit') throw unknownCommand('security', sub, ['audit']);
  return audit(rest, io);
}

const AUDIT_FLAGS = {
  deep: { type: 'boolean' },
  fix: { type: 'boolean' },
  token: { type: 'string' },
  password: { type: 'string' },
} as const;

function options(args: string[]) {
  const { values, positionals } = parseFlags(args, AUDIT_FLAGS);
  if (positionals.length) throw usageError(`unexpected argument "${positionals[0]}" (see claw security --help)`);
  return values;
}

/** Config (raw and resolved), paths and discovered plugins; no plugin code runs. */
async function auditContext(io: Io): Promise<AuditContext> {
  const kernel = await bootKernel(io, { strictConfig: false });
  const broken = kernel.config.issues.find((issue) => issue.path === '<file>');
  if (broken) throw new CliError(`cannot audit ${kernel.config.path}: ${broken.message}`);
  return {
    config: kernel.config.resolved as AuditContext['config'],
    raw: kernel.config.raw,
    env: io.env,
    stateDir: kernel.paths.stateDir,
    configPath: kernel.paths.configPath,
    workspaceDir: kernel.paths.workspaceDir,
    plugins: kernel.plugins.list(),
  };
}

async function audit(args: string[], io: Io): Promise<number> {
  const flags = options(args);
  if ((flags.token !== undefined || flags.password !== undefined) && !flags.deep)
    throw usageError('--token and --password are for the --deep probe');
  let ctx = await auditContext(io);
  let fix: FixOutcome | undefined;
  if (flags.fix) {
    fix = await applyFixes(ctx, io);
    // What is left is judged on the config and modes as they are now.
    ctx = await auditContext(io);
  }
  const findings = runChecks(ctx);
  let probe: ProbeReport | undefined;
  if (flags.deep) {
    const probed = await probeGateway(ctx, { token: flags.token, password: flags.password, version: clawVersion() });
    findings.push(...probed.findings);
    probe = probed.report;
  }
  const sorted = sortFindings(findings);
  printAudit(io, { stateDir: ctx.stateDir, configPath: ctx.configPath, findings: sorted, fix, probe });
  return summarize(sorted).critical > 0 ? 1 : 0;
}
