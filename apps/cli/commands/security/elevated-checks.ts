/**
 * Elevated mode (`tools.elevated`): an exec call that leaves the sandbox for the host. Who may
 * ask for it is `tools.elevated.allowFrom.<channel>`; a "*" there approves every sender on
 * that channel. Judged, as in OpenClaw, unless elevated is switched off outright: a wildcard
 * waiting behind `enabled` unset becomes live the moment someone turns elevated on.
 */
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

/** More entries than this is no longer a short list of people the owner knows. */
const LARGE_ALLOWLIST = 25;

const entriesOf = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((entry) => String(entry).trim()).filter(Boolean) : [];

export function elevatedChecks(ctx: AuditContext): Finding[] {
  const elevated = section(section(ctx.config.tools).elevated);
  if (elevated.enabled === false) return [];
  const findings: Finding[] = [];
  const state =
    elevated.enabled === true
      ? 'on'
      : 'off for now (tools.elevated.enabled is unset), but the list applies as soon as it is turned on';
  for (const [channel, list] of Object.entries(section(elevated.allowFrom))) {
    const entries = entriesOf(list);
    const key = `tools.elevated.allowFrom.${channel}`;
    if (entries.includes('*')) {
      findings.push({
        checkId: `${key}.wildcard`,
        severity: 'critical',
        title: `Every ${channel} sender may run commands outside the sandbox`,
        detail:
          `${key} includes "*": anyone who can message the assistant on ${channel} may ask for elevated exec, which runs on the ` +
          `host instead of in the sandbox (elevated mode is ${state}).`,
        fix:
          `Replace "*" in ${key} with the sender ids of the people you trust (--fix removes "*"), or set tools.elevated.enabled to ` +
          `false.`,
        fixable: true,
      });
    } else if (entries.length > LARGE_ALLOWLIST) {
      findings.push({
        checkId: `${key}.large`,
        severity: 'warn',
        title: `Long elevated allowlist on ${channel}`,
        detail: `${key} has ${entries.length} entries: every one of them may run commands on the host instead of in the sandbox.`,
        fix: `Keep ${key} to the few people who need host commands.`,
        fixable: false,
      });
    }
  }
  return findings;
}

/** `--fix`: "*" leaves every `tools.elevated.allowFrom.<channel>` of the raw config (the rest stays). */
export function dropElevatedWildcards(raw: AnyRecord): Array<{ key: string; from: string; to: string }> {
  const elevated = section(section(raw.tools).elevated);
  if (elevated.enabled === false) return [];
  const changed: Array<{ key: string; from: string; to: string }> = [];
  for (const [channel, list] of Object.entries(section(elevated.allowFrom))) {
    if (!Array.isArray(list) || !list.some((entry) => String(entry).trim() === '*')) continue;
    const kept = list.filter((entry) => String(entry).trim() !== '*');
    changed.push({ key: `tools.elevated.allowFrom.${channel}`, from: JSON.stringify(list), to: JSON.stringify(kept) });
    elevated.allowFrom[channel] = kept;
  }
  return changed;
}
