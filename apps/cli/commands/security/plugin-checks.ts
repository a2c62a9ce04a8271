/**
 * Supply chain: code from outside claw runs with the user's full rights, so it should be
 * named (plugins.allow) and traceable to where it came from (install records).
 */
import { existsSync } from 'node:fs';
import type { PluginRecord } from '../../../../kernel/index.js';
import { section, type AuditContext, type Finding } from './types.js';

const thirdParty = (record: PluginRecord) => record.manifest !== undefined && record.origin !== 'bundled' && record.origin !== 'inline';

function allowlistCheck(ctx: AuditContext): Finding[] {
  const allow = section(ctx.config.plugins).allow;
  if (Array.isArray(allow) && allow.length > 0) return [];
  const outside = ctx.plugins.filter(thirdParty);
  if (outside.length === 0) return [];
  const names = outside.map((record) => `${record.id} (${record.origin}, ${record.enabled ? 'on' : 'off'})`).join(', ');
  const enabled = ctx.plugins.filter((record) => record.enabled).map((record) => `"${record.id}"`);
  return [{
    checkId: 'plugins.extensions_no_allowlist',
    severity: 'warn',
    title: 'Plugins from outside claw load without an allowlist',
    detail: `Found ${names}, and plugins.allow is not set: whatever lands in the extensions folder or a configured path is loaded and runs with your rights.`,
    fix: `Set plugins.allow to the plugins you trust; a plugin not listed is off, bundled ones included (on now: ${enabled.join(', ')}).`,
    fixable: false,
  }];
}

function originCheck(ctx: AuditContext): Finding[] {
  const installs = section(section(ctx.config.plugins).installs);
  const reasons: string[] = [];
  for (const record of ctx.plugins.filter(thirdParty)) {
    if (record.origin === 'config' && record.enabled) reasons.push(`${record.id} loads from plugins.load.paths (${record.dir})`);
    if (record.origin === 'workspace' && record.enabled) reasons.push(`${record.id} loads from the agent workspace (${record.dir}), which may hold someone else's repository`);
    if (record.origin === 'global' && installs[record.id] === undefined) reasons.push(`${record.id} sits in ${record.dir} with no install record (copied there by hand?)`);
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
  return [{
    checkId: 'plugins.unknown_origin',
    severity: 'warn',
    title: 'Plugins whose origin is not on record',
    detail: `${reasons.join('; ')}.`,
    fix: 'Install plugins with `claw plugins install` (it records the source), remove ones you do not recognise (`claw plugins uninstall <id>`), and keep only trusted folders in plugins.load.paths.',
    fixable: false,
  }];
}

export function pluginChecks(ctx: AuditContext): Finding[] {
  return [...allowlistCheck(ctx), ...originCheck(ctx)];
}
