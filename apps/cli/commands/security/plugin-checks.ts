/**
 * Supply chain: code from outside claw runs with the user's full rights, so it should be
 * named (plugins.allow) and traceable to where it came from (install records).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginRecord } from '../../../../kernel/index.js';
import { auditFacts } from './facts.js';
import { section, type AuditContext, type Finding } from './types.js';

const thirdParty = (record: PluginRecord) =>
  record.manifest !== undefined && record.origin !== 'bundled' && record.origin !== 'inline';

function allowlistCheck(ctx: AuditContext): Finding[] {
  const allow = section(ctx.config.plugins).allow;
  if (Array.isArray(allow) && allow.length > 0) return [];
  const outside = ctx.plugins.filter(thirdParty);
  if (outside.length === 0) return [];
  const names = outside.map((record) => `${record.id} (${record.origin}, ${record.enabled ? 'on' : 'off'})`).join(', ');
  const enabled = ctx.plugins.filter((record) => record.enabled).map((record) => `"${record.id}"`);
  return [
    {
      checkId: 'plugins.extensions_no_allowlist',
      severity: 'warn',
      title: 'Plugins from outside claw load without an allowlist',
      detail: `Found ${names}, and plugins.allow is not set: whatever lands in the extensions folder or a configured path is loaded and runs with your rights.`,
      fix: `Set plugins.allow to the plugins you trust; a plugin not listed is off, bundled ones included (on now: ${enabled.join(', ')}).`,
      fixable: false,
    },
  ];
}

function originCheck(ctx: AuditContext): Finding[] {
  const installs = section(section(ctx.config.plugins).installs);
  const reasons: string[] = [];
  for (const record of ctx.plugins.filter(thirdParty)) {
    if (record.origin === 'config' && record.enabled)
      reasons.push(`${record.id} loads from plugins.load.paths (${record.dir})`);
    if (record.origin === 'workspace' && record.enabled)
      reasons.push(
        `${record.id} loads from the agent workspace (${record.dir}), which may hold someone else's repository`,
      );
    if (record.origin === 'global' && installs[record.id] === undefined)
      reasons.push(`${record.id} sits in ${record.dir} with no install record (copied there by hand?)`);
  }
  for (const [id, value] of Object.entries(installs)) {
    const install = section(value);
    if (typeof install.installPath === 'string' && !existsSync(install.installPath)) {
      reasons.push(`plugins.installs.${id} points to ${install.installPath}, which no longer exists`);
    }
    if (typeof install.source !== 'string' || typeof install.spec !== 'string' || install.spec === '') {
      reasons.push(`plugins.installs.${id} does not record where the plugin came from (source and spec)`);
    }
  }
  if (reasons.length === 0) return [];
  return [
    {
      checkId: 'plugins.unknown_origin',
      severity: 'warn',
      title: 'Plugins whose origin is not on record',
      detail: `${reasons.join('; ')}.`,
      fix: 'Install plugins with `claw plugins install` (it records the source), remove ones you do not recognise (`claw plugins uninstall <id>`), and keep only trusted folders in plugins.load.paths.',
      fixable: false,
    },
  ];
}

/** plugins.allow names nothing that exists: a plugin installed later under that id loads unasked. */
function phantomAllowCheck(ctx: AuditContext): Finding[] {
  const allow: unknown[] = Array.isArray(section(ctx.config.plugins).allow) ? ctx.config.plugins.allow : [];
  const known = new Set(ctx.plugins.map((record) => record.id.toLowerCase()));
  const phantom = allow.filter((id): id is string => typeof id === 'string' && !known.has(id.trim().toLowerCase()));
  if (phantom.length === 0) return [];
  return [
    {
      checkId: 'plugins.allow_phantom_entries',
      severity: 'warn',
      title: 'plugins.allow names plugins that are not installed',
      detail:
        `plugins.allow lists ${phantom.map((id) => `"${id}"`).join(', ')}, which no installed or bundled plugin has: ` +
        'whatever is installed under that id later is trusted without a second look.',
      fix: 'Remove the entries you no longer use from plugins.allow, or install the plugins they stand for.',
      fixable: false,
    },
  ];
}

/** An exact version ("pkg@1.2.3", "@scope/pkg@1.2.3-rc.1"): the registry cannot hand out something else. */
const isPinned = (spec: string) =>
  /^(@[^/@\s]+\/)?[^/@\s]+@v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(spec.trim());

function installedVersion(path: string): string | undefined {
  try {
    const version = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** npm installs: pinned to a version, and still the version that was recorded. */
function npmInstallChecks(ctx: AuditContext): Finding[] {
  const npm = Object.entries(section(section(ctx.config.plugins).installs)).filter(
    ([, value]) => section(value).source === 'npm',
  );
  const unpinned = npm
    .filter(([, value]) => typeof value.spec === 'string' && !isPinned(value.spec))
    .map(([id, value]) => `${id} (${value.spec})`);
  const drift = npm.flatMap(([id, value]) => {
    const recorded = section(value).version;
    const found = typeof value.installPath === 'string' ? installedVersion(value.installPath) : undefined;
    const drifted = typeof recorded === 'string' && found !== undefined && found !== recorded;
    return drifted ? [`${id} (recorded ${recorded}, installed ${found})`] : [];
  });
  const findings: Finding[] = [];
  if (unpinned.length > 0) {
    findings.push({
      checkId: 'plugins.installs_unpinned_npm_specs',
      severity: 'warn',
      title: 'Plugins installed from npm without a pinned version',
      detail: `${unpinned.join(', ')}: an update or reinstall takes whatever the registry serves then.`,
      fix: 'Reinstall with an exact version, e.g. `claw plugins install @scope/pkg@1.2.3`.',
      fixable: false,
    });
  }
  if (drift.length > 0) {
    findings.push({
      checkId: 'plugins.installs_version_drift',
      severity: 'warn',
      title: 'Installed plugins differ from their install records',
      detail: `${drift.join(', ')}: the code on disk is not the version that was installed.`,
      fix: 'Reinstall the plugin (`claw plugins install <spec>`) so the record and the files agree, and find out what changed them.',
      fixable: false,
    });
  }
  return findings;
}

/** Tools of third-party plugins that an agent's tool policy lets through. */
function reachableToolsCheck(ctx: AuditContext): Finding[] {
  const outside = ctx.plugins.filter(
    (record) => record.enabled && thirdParty(record) && (record.manifest?.tools?.length ?? 0) > 0,
  );
  if (outside.length === 0) return [];
  const reached = auditFacts(ctx).scopes.flatMap((scope) => {
    const tools = outside.flatMap((record) => (record.manifest?.tools ?? []).filter(scope.can));
    return tools.length > 0 ? [`${scope.id} (${tools.join(', ')})`] : [];
  });
  if (reached.length === 0) return [];
  return [
    {
      checkId: 'plugins.tools_reachable_permissive_policy',
      severity: 'warn',
      title: 'Agents can call tools of plugins from outside claw',
      detail:
        `Plugins ${outside.map((record) => record.id).join(', ')} add tools, and the tool policy lets agent ${reached.join('; ')} ` +
        `call them: their code runs whenever the model decides to.`,
      fix:
        'Allow only the tools each agent needs (tools.allow or a tools.profile, per agent agents.list[].tools), especially for agents ' +
        'that read untrusted input.',
      fixable: false,
    },
  ];
}

export function pluginChecks(ctx: AuditContext): Finding[] {
  return [
    ...allowlistCheck(ctx),
    ...originCheck(ctx),
    ...phantomAllowCheck(ctx),
    ...npmInstallChecks(ctx),
    ...reachableToolsCheck(ctx),
  ];
}
