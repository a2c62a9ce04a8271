/** Printing an audit: grouped text (critical first) or one JSON document. */
import { printJson, println, type Io } from '../../io.js';
import type { FixOutcome } from './fix.js';
import type { ProbeReport } from './probe.js';
import { SEVERITY_ORDER, type Finding, type Severity } from './types.js';

export interface AuditResult {
  stateDir: string;
  configPath: string;
  findings: Finding[];
  fix?: FixOutcome;
  probe?: ProbeReport;
}

/** A config value as written: lists are already JSON, words get quotes. */
const shown = (value: string) => (value.startsWith('[') ? value : `"${value}"`);

export function summarize(findings: readonly Finding[]): Record<Severity, number> {
  const summary: Record<Severity, number> = { critical: 0, warn: 0, info: 0 };
  for (const finding of findings) summary[finding.severity]++;
  return summary;
}

/** Critical first, then warn, then info; the order of the checks within each. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return SEVERITY_ORDER.flatMap((severity) => findings.filter((finding) => finding.severity === severity));
}

export function printAudit(io: Io, result: AuditResult): void {
  const summary = summarize(result.findings);
  if (io.json) {
    printJson(io, {
      ok: summary.critical === 0,
      summary,
      findings: result.findings,
      ...(result.fix
        ? { fixed: result.fix.fixed, ...(result.fix.failed.length ? { fixFailed: result.fix.failed } : {}) }
        : {}),
      ...(result.probe ? { probe: result.probe } : {}),
    });
    return;
  }
  println(io, `Security audit of ${result.stateDir} (config ${result.configPath})`);
  println(io, `Summary: ${summary.critical} critical · ${summary.warn} warn · ${summary.info} info`);
  for (const severity of SEVERITY_ORDER) {
    const group = result.findings.filter((finding) => finding.severity === severity);
    if (group.length === 0) continue;
    println(io);
    println(io, severity.toUpperCase());
    for (const finding of group) {
      println(io, `  ${finding.checkId}  ${finding.title}${finding.fixable ? '  (--fix)' : ''}`);
      println(io, `    ${finding.detail}`);
      println(io, `    Fix: ${finding.fix}`);
    }
  }
  if (result.probe) {
    const { probe } = result;
    println(io);
    println(
      io,
      `Gateway probe ${probe.url}: ${probe.healthy ? 'health ok' : `failed (${probe.error})`}; a client without credentials was ${probe.unauthenticated}.`,
    );
  }
  if (result.fix) {
    println(io);
    if (result.fix.fixed.length === 0 && result.fix.failed.length === 0) println(io, 'Nothing for --fix to change.');
    else if (result.fix.fixed.length > 0) println(io, `Fixed (${result.fix.fixed.length}):`);
    for (const action of result.fix.fixed) {
      const line =
        action.kind === 'config'
          ? `  ${action.key}: ${shown(action.from)} → ${shown(action.to)}`
          : `  chmod ${action.from} → ${action.to}  ${action.path}`;
      println(io, line);
    }
    for (const failure of result.fix.failed) io.stderr.write(`claw: --fix ${failure}\n`);
  }
  if (result.findings.length === 0) {
    println(io);
    println(io, 'No findings.');
  }
}
