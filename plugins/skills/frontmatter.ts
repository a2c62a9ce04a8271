/**
 * SKILL.md front matter: YAML between `---` lines, read into a checked SkillMeta. Every
 * problem becomes one sentence naming the key, so a broken skill is listed as invalid with
 * its reason and never stops the others from loading.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** Loaded on the first SKILL.md, not when the plugin is. */
let yamlModule: typeof import('yaml') | undefined;
let json5Module: typeof import('json5') | undefined;

export const OS_NAMES = ['darwin', 'linux', 'win32'] as const;

export interface SkillRequires {
  bins: string[];
  anyBins: string[];
  env: string[];
  config: string[];
}

/** `metadata.openclaw` (or the legacy `metadata.clawdbot`). */
export interface OpenClawMeta {
  emoji?: string;
  homepage?: string;
  skillKey?: string;
  primaryEnv?: string;
  always: boolean;
  os: string[];
  requires: SkillRequires;
  /** Installer hints, shown by `claw skills info`; claw installs nothing itself. */
  install: Array<Record<string, unknown>>;
}

export interface SkillMeta {
  /** From the front matter, or the folder's name. */
  name: string;
  description: string;
  homepage?: string;
  userInvocable: boolean;
  disableModelInvocation: boolean;
  commandDispatch?: 'tool';
  commandTool?: string;
  openclaw: OpenClawMeta;
}

export type ParsedSkill = { ok: true; meta: SkillMeta; body: string } | { ok: false; error: string; name?: string };

/** Skill names: what a folder, a config key and (sanitized) a slash command can carry. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

class FrontMatterError extends Error {}

function fail(message: string): never {
  throw new FrontMatterError(message);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function optionalString(value: unknown, key: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') fail(`${key} must be a non-empty string`);
  return value.trim();
}

function optionalBoolean(value: unknown, key: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  // Hand-written front matter often quotes booleans.
  if (value === 'true' || value === 'false') return value === 'true';
  return fail(`${key} must be true or false, got ${JSON.stringify(value)}`);
}

function stringList(value: unknown, key: string, pattern?: RegExp): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item.trim() === ''))
    fail(`${key} must be a list of non-empty strings`);
  const out = (list as string[]).map((item) => item.trim());
  const bad = pattern ? out.find((item) => !pattern.test(item)) : undefined;
  if (bad !== undefined) fail(`${key} has an invalid entry "${bad}"`);
  return out;
}

/** `metadata` may be a YAML mapping or a (single-line) JSON5 string, as OpenClaw accepts both. */
function metadataObject(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') {
    json5Module ??= require('json5') as typeof import('json5');
    try {
      value = json5Module.parse(value);
    } catch (error) {
      fail(`metadata is not valid JSON5: ${(error as Error).message}`);
    }
  }
  if (!isRecord(value)) fail('metadata must be an object');
  return value as Record<string, unknown>;
}

function openclawMeta(metadata: Record<string, unknown>): OpenClawMeta {
  const key = metadata.openclaw !== undefined ? 'openclaw' : metadata.clawdbot !== undefined ? 'clawdbot' : undefined;
  const raw = key ? metadata[key] : {};
  if (!isRecord(raw)) fail(`metadata.${key} must be an object`);
  const at = `metadata.${key ?? 'openclaw'}`;
  const requires = raw.requires ?? {};
  if (!isRecord(requires)) fail(`${at}.requires must be an object`);
  const os = stringList(raw.os, `${at}.os`).map((name) => name.toLowerCase());
  const unknownOs = os.find((name) => !(OS_NAMES as readonly string[]).includes(name));
  if (unknownOs) fail(`${at}.os: "${unknownOs}" is not one of ${OS_NAMES.join(', ')}`);
  const install = raw.install ?? [];
  if (!Array.isArray(install) || install.some((item) => !isRecord(item)))
    fail(`${at}.install must be a list of objects`);
  const primaryEnv = optionalString(raw.primaryEnv, `${at}.primaryEnv`);
  if (primaryEnv && !ENV_NAME.test(primaryEnv))
    fail(`${at}.primaryEnv "${primaryEnv}" is not an environment variable name`);
  const skillKey = optionalString(raw.skillKey, `${at}.skillKey`);
  if (skillKey && !NAME.test(skillKey))
    fail(`${at}.skillKey "${skillKey}" must be letters, digits, ".", "_" or "-" (at most 64)`);
  return {
    emoji: optionalString(raw.emoji, `${at}.emoji`),
    homepage: optionalString(raw.homepage, `${at}.homepage`),
    skillKey,
    primaryEnv,
    always: optionalBoolean(raw.always, `${at}.always`, false),
    os,
    requires: {
      bins: stringList(requires.bins, `${at}.requires.bins`, /^[^/\\\s]+$/),
      anyBins: stringList(requires.anyBins, `${at}.requires.anyBins`, /^[^/\\\s]+$/),
      env: stringList(requires.env, `${at}.requires.env`, ENV_NAME),
      config: stringList(requires.config, `${at}.requires.config`, /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/),
    },
    install: install as Array<Record<string, unknown>>,
  };
}

/**
 * Front matter made only of `key: value` lines with plain, quoted or JSON values (the usual
 * SKILL.md, metadata as one line of JSON) is read here without loading the YAML library
 * (≈ 120 ms on first use); anything else — blocks, anchors, comments after values — returns
 * undefined and goes to YAML, which also words the errors.
 */
export function simpleFrontMatter(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || /^#/.test(line)) continue;
    const pair = /^([A-Za-z][\w-]*):[ \t]+(\S.*?)[ \t]*$/.exec(line);
    if (!pair || pair[1]! in out) return undefined;
    const raw = pair[2]!;
    let value: unknown;
    if (/^[{["]/.test(raw)) {
      try {
        value = JSON.parse(raw);
      } catch {
        return undefined;
      }
    } else if (raw.startsWith("'")) {
      if (!/^'(?:[^']|'')*'$/.test(raw)) return undefined;
      value = raw.slice(1, -1).replace(/''/g, "'");
    } else {
      // What YAML reads differently from a plain string: indicators, comments, nested mappings, tags.
      if (/^[|>&*!%@`]/.test(raw) || / #|: /.test(raw)) return undefined;
      if (/^(true|false)$/.test(raw)) value = raw === 'true';
      else if (/^(null|~)$/.test(raw) || /^[-+]?(\d|\.\d)/.test(raw) || /^(yes|no|on|off)$/i.test(raw))
        return undefined;
      else value = raw;
    }
    out[pair[1]!] = value;
  }
  return out;
}

/** Split a SKILL.md into its front matter block and body. */
function split(text: string): { yaml: string; body: string } {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(source);
  if (!match) fail('SKILL.md must start with YAML front matter between "---" lines');
  return { yaml: match[1]!, body: source.slice(match[0].length) };
}

export function parseSkillFile(text: string, folderName: string): ParsedSkill {
  let data: unknown;
  let name: string | undefined;
  try {
    const { yaml, body } = split(text);
    data = simpleFrontMatter(yaml);
    if (data === undefined) {
      yamlModule ??= require('yaml') as typeof import('yaml');
      try {
        data = yamlModule.parse(yaml);
      } catch (error) {
        fail(`front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    if (!isRecord(data)) fail('front matter must be a YAML mapping (key: value lines)');
    const fields = data as Record<string, unknown>;
    name = optionalString(fields.name, 'name') ?? folderName;
    if (!NAME.test(name)) fail(`name "${name}" must be letters, digits, ".", "_" or "-" (at most 64, no spaces)`);
    const description = optionalString(fields.description, 'description');
    if (!description) fail('description is missing (the model picks skills by it)');
    const dispatch = optionalString(fields['command-dispatch'], 'command-dispatch');
    if (dispatch !== undefined && dispatch !== 'tool') fail(`command-dispatch must be "tool", got "${dispatch}"`);
    const commandTool = optionalString(fields['command-tool'], 'command-tool');
    if (dispatch === 'tool' && !commandTool) fail('command-dispatch: tool needs command-tool (the tool to run)');
    const argMode = optionalString(fields['command-arg-mode'], 'command-arg-mode');
    if (argMode !== undefined && argMode !== 'raw') fail(`command-arg-mode must be "raw", got "${argMode}"`);
    const openclaw = openclawMeta(metadataObject(fields.metadata));
    return {
      ok: true,
      body,
      meta: {
        name,
        description,
        homepage: optionalString(fields.homepage, 'homepage') ?? openclaw.homepage,
        userInvocable: optionalBoolean(fields['user-invocable'], 'user-invocable', true),
        disableModelInvocation: optionalBoolean(fields['disable-model-invocation'], 'disable-model-invocation', false),
        ...(dispatch === 'tool' ? { commandDispatch: 'tool' as const, commandTool } : {}),
        openclaw,
      },
    };
  } catch (error) {
    if (error instanceof FrontMatterError) return { ok: false, error: error.message, ...(name ? { name } : {}) };
    throw error;
  }
}
