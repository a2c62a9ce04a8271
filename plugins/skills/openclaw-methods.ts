/**
 * OpenClaw's skill methods beyond skills.status, over claw's skill catalog. claw's skills come
 * from folders (bundled, managed, workspace, plugins, extra dirs): there is no ClawHub registry
 * to search or install from, no security verdicts (those rate ClawHub skills), no skill cards,
 * and no Skill Workshop that drafts and applies proposals. Reads answer OpenClaw's empty shapes
 * for those; actions fail with UNAVAILABLE saying so. There is no shared skill library either
 * (OpenClaw's team/personal skill store with pinned revisions): it lists empty and refuses
 * changes. skills.bins, skills.update (the skills.entries config) and plugins.skills.read (the
 * skills a loaded plugin ships) are real.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { agentIds, unknownAgentProblem } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  ProtocolError,
  redactConfig,
  REDACTED,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';
import type { SkillsCatalog } from './catalog.js';
import { editConfig } from '../../sdk/config.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };
const NO_WORKSHOP = 'claw has no Skill Workshop: skills are folders with a SKILL.md you write or copy in';
const NO_REGISTRY = 'claw has no skill registry (ClawHub); put skill folders in the workspace or managed skills dir';
const NO_LIBRARY = 'claw has no skill library: skills are folders in the workspace, managed or plugin skill dirs';
/** What clients send back for a secret they were shown redacted: keep the stored value. */
const KEEP = new Set([REDACTED, '__OPENCLAW_REDACTED__']);
/** A plugin skill's files as plugins.skills.read lists them: enough for a viewer, bounded like OpenClaw's. */
const MAX_FILES = 256;
const MAX_DIRS = 512;
const MAX_FILE_BYTES = 256 * 1024;

type Scope = 'operator.read' | 'operator.write' | 'operator.admin';

export function registerSkillMethods(api: PluginApi, catalog: SkillsCatalog): void {
  const config = () => api.kernel.config() as KernelConfig;
  /** The agent a request names (default: the default agent), refused when unknown. */
  const agentOf = (params: { agentId?: unknown }) => {
    if (params.agentId === undefined) return catalog.defaultAgent();
    const problem = unknownAgentProblem(config(), String(params.agentId));
    if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
    return String(params.agentId);
  };
  const method = (name: string, scope: Scope | undefined, description: string, handler: (params: any) => unknown) =>
    api.registerGatewayMethod(name, { params: ANY_PARAMS, ...(scope ? { scope } : {}), description, handler });
  const refuse = (name: string, scope: Scope, message: string) =>
    method(name, scope, `Refused: ${message}.`, () => {
      throw new ProtocolError(ErrorCodes.UNAVAILABLE, message);
    });

  // OpenClaw reserves this for node hosts (role node, no operator scope); claw's nodes are still to come, so any
  // authenticated connection may read it, as health.
  method(
    'skills.bins',
    undefined,
    'Every binary the skills of every agent require (requires.bins and anyBins), sorted: {bins}.',
    () => {
      const bins = new Set<string>();
      for (const agentId of new Set(agentIds(config()))) {
        for (const skill of catalog.report(agentId).skills) {
          for (const bin of [...skill.requirements.bins, ...skill.requirements.anyBins]) bins.add(bin);
        }
      }
      return { bins: [...bins].sort() };
    },
  );

  method(
    'skills.securityVerdicts',
    'operator.read',
    'ClawHub security verdicts: none, as no skill comes from ClawHub.',
    (params) => {
      agentOf(params);
      return { schema: 'openclaw.skills.security-verdicts.v1', items: [] };
    },
  );
  method(
    'skills.skillCard',
    'operator.read',
    'A skill’s card: claw’s skills have none.',
    (params: { agentId?: unknown; skillKey?: unknown }) => {
      agentOf(params);
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `skill card not found for ${String(params.skillKey)}`);
    },
  );
  method('skills.search', 'operator.read', 'The ClawHub skill search, empty: claw has no skill registry.', () => ({
    results: [],
  }));
  refuse('skills.detail', 'operator.read', NO_REGISTRY);
  refuse('skills.install', 'operator.admin', NO_REGISTRY);

  method(
    'skills.proposals.list',
    'operator.read',
    'Skill Workshop proposals: none, as claw has no workshop.',
    (params) => {
      agentOf(params);
      return {
        schema: 'openclaw.skill-workshop.proposals-manifest.v1',
        updatedAt: new Date(0).toISOString(),
        proposals: [],
        installedSkills: [],
      };
    },
  );
  method('skills.proposals.inspect', 'operator.read', 'One Skill Workshop proposal: there are none.', (params) => {
    agentOf(params);
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `Skill proposal not found: ${String(params.proposalId)}`);
  });
  method('skills.workshop.read', 'operator.read', 'A workshop-generated skill: claw generates none.', (params) => {
    agentOf(params);
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `No Workshop-generated skill matched: ${String(params.name)}. ${NO_WORKSHOP}.`,
    );
  });
  for (const name of [
    'skills.proposals.create',
    'skills.proposals.evaluate',
    'skills.proposals.apply',
    'skills.proposals.requestRevision',
  ]) {
    refuse(name, 'operator.admin', NO_WORKSHOP);
  }

  registerSkillsUpdate(api, method);
  registerSkillLibrary(method, refuse);
  registerPluginSkillRead(catalog, method);
}

type Method = (name: string, scope: Scope | undefined, description: string, handler: (params: any) => unknown) => void;

interface SkillEntryPatch {
  skillKey?: unknown;
  enabled?: unknown;
  apiKey?: unknown;
  env?: unknown;
  source?: unknown;
}

/** OpenClaw's skills.update: a skill's skills.entries.<key> (enabled, apiKey, env) written through the config lock. */
function registerSkillsUpdate(api: PluginApi, method: Method): void {
  method(
    'skills.update',
    'operator.admin',
    'Change skills.entries.<skillKey> (enabled, apiKey, env; empty strings remove): {ok, skillKey, config} with secrets redacted.',
    async (params: SkillEntryPatch) => {
      if (params.source !== undefined) {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, NO_REGISTRY);
      }
      const skillKey = typeof params.skillKey === 'string' ? params.skillKey.trim() : '';
      if (!skillKey) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'skills.update needs params.skillKey');
      if (params.enabled !== undefined && typeof params.enabled !== 'boolean')
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'skills.update: enabled must be true or false');
      if (params.apiKey !== undefined && typeof params.apiKey !== 'string')
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'skills.update: apiKey must be a string');
      const env = params.env ?? {};
      if (
        env === null ||
        typeof env !== 'object' ||
        Array.isArray(env) ||
        Object.values(env).some((v) => typeof v !== 'string')
      )
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'skills.update: env must map names to strings');
      const entry = await editConfig(api, `skills.update ${skillKey}`, (raw) => {
        const skills = (raw.skills ??= {}) as Record<string, unknown>;
        const entries = (skills.entries ??= {}) as Record<string, Record<string, unknown>>;
        const next = { ...entries[skillKey] };
        if (typeof params.enabled === 'boolean') next.enabled = params.enabled;
        if (typeof params.apiKey === 'string' && !KEEP.has(params.apiKey.trim())) {
          if (params.apiKey.trim()) next.apiKey = params.apiKey.trim();
          else delete next.apiKey;
        }
        if (params.env !== undefined) {
          const nextEnv = { ...(next.env as Record<string, string> | undefined) };
          for (const [name, value] of Object.entries(env as Record<string, string>)) {
            if (!name.trim() || KEEP.has(value.trim())) continue;
            if (value.trim()) nextEnv[name.trim()] = value.trim();
            else delete nextEnv[name.trim()];
          }
          next.env = nextEnv;
        }
        entries[skillKey] = next;
        return next;
      });
      // Every env value is treated as a secret: skills take their tokens that way.
      return { ok: true, skillKey, config: redactConfig(entry, (path) => path[0] === 'env' && path.length === 2) };
    },
  );
}

/** OpenClaw's shared skill library, which claw does not have: an empty list, nothing to read, changes refused. */
function registerSkillLibrary(method: Method, refuse: (name: string, scope: Scope, message: string) => void): void {
  method('skills.library.list', 'operator.read', 'The skill library, empty: claw has none.', () => ({
    entries: [],
    profileId: null,
    multipleProfiles: false,
    defaultTarget: 'unavailable',
    canManageWorkspace: false,
    defaultSelectionLimit: 64,
  }));
  method('skills.library.read', 'operator.read', 'A skill library entry: there are none.', (params) => {
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `Skill library entry not found: ${String(params.skillId)}. ${NO_LIBRARY}.`,
      { code: 'SKILL_LIBRARY_NOT_FOUND' },
    );
  });
  for (const name of ['save', 'mutate', 'activate', 'import', 'upload']) {
    refuse(`skills.library.${name}`, 'operator.write', NO_LIBRARY);
  }
}

/** OpenClaw's plugins.skills.read for an installed plugin: the skill folder a loaded plugin ships, listed and read. */
function registerPluginSkillRead(catalog: SkillsCatalog, method: Method): void {
  method(
    'plugins.skills.read',
    'operator.read',
    "A plugin's skill: {name, rootPath, entryPath, files: [{path, sizeBytes, status, content?}], directories, inventoryComplete}.",
    (params: { source?: unknown; pluginId?: unknown; skillName?: unknown; path?: unknown }) => {
      if (params.source === 'catalog')
        throw new ProtocolError(
          ErrorCodes.UNAVAILABLE,
          'claw has no plugin catalogue; plugins are installed from disk',
        );
      if (params.source !== 'installed' || typeof params.pluginId !== 'string' || typeof params.skillName !== 'string')
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          'plugins.skills.read needs source "installed", pluginId and skillName',
        );
      const skill = catalog
        .report(catalog.defaultAgent())
        .skills.find((entry) => entry.pluginId === params.pluginId && entry.name === params.skillName);
      if (!skill)
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          `plugin "${params.pluginId}" has no skill "${params.skillName}"`,
        );
      return readSkillFolder(skill.name, skill.baseDir, skill.filePath, params.path);
    },
  );
}

/** The skill folder's files and directories (symlinks are listed, never followed), with the one asked for read. */
function readSkillFolder(name: string, rootPath: string, entryFile: string, wanted: unknown) {
  if (
    wanted !== undefined &&
    (typeof wanted !== 'string' || wanted.startsWith('/') || wanted.split(/[\\/]/).includes('..'))
  )
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'Invalid plugin skill bundle path.');
  const entryPath = relative(rootPath, entryFile).split(sep).join('/');
  const show = (wanted as string | undefined) ?? entryPath;
  const files: Array<{ path: string; sizeBytes: number; status: string; content?: string }> = [];
  const directories: string[] = [];
  let complete = true;
  const walk = (dir: string, prefix: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      complete = false;
      return;
    }
    for (const entry of names) {
      const path = prefix ? `${prefix}/${entry}` : entry;
      const stat = lstatSync(join(dir, entry));
      if (stat.isDirectory()) {
        if (directories.length >= MAX_DIRS) complete = false;
        else {
          directories.push(path);
          walk(join(dir, entry), path);
        }
      } else if (stat.isFile()) {
        if (files.length >= MAX_FILES) complete = false;
        else files.push(describeFile(join(dir, entry), path, stat.size, path === show));
      }
    }
  };
  walk(realpathSync(rootPath), '');
  if (wanted !== undefined && !files.some((file) => file.path === wanted))
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `plugin skill "${name}" has no file ${String(wanted)}`);
  return { name, rootPath, entryPath, files, directories, inventoryComplete: complete };
}

function describeFile(file: string, path: string, sizeBytes: number, read: boolean) {
  if (sizeBytes > MAX_FILE_BYTES) return { path, sizeBytes, status: 'too-large' };
  if (!read) return { path, sizeBytes, status: 'deferred' };
  const bytes = readFileSync(file);
  if (bytes.includes(0)) return { path, sizeBytes, status: 'binary' };
  return { path, sizeBytes, status: 'ready', content: bytes.toString('utf8') };
}
