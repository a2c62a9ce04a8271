/**
 * Where skills come from and which copy wins. Roots in precedence order: the agent's
 * workspace `skills/`, the managed `<state>/skills`, the package's bundled `skills/`, the
 * `skills` folders of enabled plugins, then `skills.load.extraDirs`. A root holds skill
 * folders, grouped as deep as MAX_DEPTH; a SKILL.md ends the descent below its folder. The
 * first valid copy of a name wins; later ones are recorded as shadowed.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSkillFile, type ParsedSkill, type SkillMeta } from './frontmatter.js';

export type SkillSource = 'workspace' | 'managed' | 'bundled' | 'plugin' | 'extra';

export interface SkillRoot {
  source: SkillSource;
  dir: string;
  /** The plugin that ships the folder (source "plugin"). */
  pluginId?: string;
}

export interface FoundSkill {
  source: SkillSource;
  pluginId?: string;
  /** The skill's folder and its SKILL.md. */
  dir: string;
  file: string;
  /** Set when the file is valid. */
  meta?: SkillMeta;
  /** Why the file is not a usable skill. */
  invalid?: string;
  /** The name it goes by (the folder's when the front matter has none or is unreadable). */
  name: string;
  /** The copy that took this name (a higher-precedence one). */
  shadowedBy?: string;
}

/** Grouped layouts: `skills/<group>/<skill>/SKILL.md`, at most this many folders down. */
const MAX_DEPTH = 6;
/** A skill's instructions are for reading; anything this large is a mistake. */
const MAX_SKILL_BYTES = 256 * 1024;
/** Folders examined per root, so a mistaken extraDir (a home directory) cannot stall a turn. */
const MAX_DIRS_PER_ROOT = 2000;

/** Bundled skills: `skills/` at the package root, from source (plugins/skills) or dist/ (dist/plugins/skills). */
export function bundledSkillsDir(): string {
  for (const relativePath of ['../../skills/', '../../../skills/']) {
    const dir = fileURLToPath(new URL(relativePath, import.meta.url));
    if (existsSync(dir)) return dir.replace(/[\\/]$/, '');
  }
  return fileURLToPath(new URL('../../skills', import.meta.url));
}

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}

/** Every SKILL.md under a root, with its folder; symlinked folders of the workspace and extra roots must stay inside them. */
function skillFiles(root: SkillRoot): Array<{ dir: string; file: string; escape?: string }> {
  const out: Array<{ dir: string; file: string; escape?: string }> = [];
  let rootReal: string;
  try {
    rootReal = realpathSync(root.dir);
  } catch {
    return out;
  }
  // Managed skills may be symlinked in from anywhere (OpenClaw allows it); other roots are boundaries.
  const contain = root.source === 'workspace' || root.source === 'extra';
  let budget = MAX_DIRS_PER_ROOT;
  const walk = (dir: string, depth: number): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.startsWith('.') || entry === 'node_modules' || --budget < 0) continue;
      const path = join(dir, entry);
      let isDir = false;
      try {
        isDir = statSync(path).isDirectory();
      } catch {
        continue;
      }
      if (!isDir) continue;
      const file = join(path, 'SKILL.md');
      if (existsSync(file)) {
        if (contain) {
          let real = '';
          try {
            real = realpathSync(file);
          } catch {
            // unreadable: reported when read
          }
          if (real && !inside(real, rootReal)) {
            out.push({
              dir: path,
              file,
              escape: `its folder leads outside ${root.dir} (to ${dirname(real)}); symlinked skills must stay inside their root`,
            });
            continue;
          }
        }
        out.push({ dir: path, file });
      } else if (depth < MAX_DEPTH) {
        walk(path, depth + 1);
      }
    }
  };
  walk(root.dir, 1);
  return out;
}

/** Parsed files by path, reused while the file's identity, size and mtime stay the same. */
const parsedFiles = new Map<string, { stamp: string; parsed: ParsedSkill }>();
const MAX_PARSED_FILES = 4096;

function parseCached(file: string, folder: string, stamp: string): ParsedSkill {
  const cached = parsedFiles.get(file);
  if (cached?.stamp === stamp) return cached.parsed;
  let parsed: ParsedSkill;
  try {
    parsed = parseSkillFile(readFileSync(file, 'utf8'), folder);
  } catch (error) {
    // Whatever the parsers throw, one bad file must not cost the agent its other skills.
    const code = (error as NodeJS.ErrnoException).code;
    parsed = {
      ok: false,
      error: code
        ? `SKILL.md cannot be read: ${code}`
        : `SKILL.md cannot be parsed: ${(error as Error).message ?? String(error)}`,
    };
  }
  parsedFiles.delete(file);
  parsedFiles.set(file, { stamp, parsed });
  if (parsedFiles.size > MAX_PARSED_FILES) parsedFiles.delete(parsedFiles.keys().next().value!);
  return parsed;
}

function readSkill(root: SkillRoot, dir: string, file: string, escape?: string): FoundSkill {
  const base: Omit<FoundSkill, 'name'> = {
    source: root.source,
    dir,
    file,
    ...(root.pluginId ? { pluginId: root.pluginId } : {}),
  };
  const folder = basename(dir);
  if (escape) return { ...base, name: folder, invalid: escape };
  let stamp: string;
  try {
    const info = statSync(file);
    if (info.size > MAX_SKILL_BYTES)
      return { ...base, name: folder, invalid: `SKILL.md is ${info.size} bytes; the limit is ${MAX_SKILL_BYTES}` };
    // The folder name is part of it: a nameless skill is named after its folder.
    stamp = `${info.ino}:${info.size}:${info.mtimeMs}:${folder}`;
  } catch (error) {
    return {
      ...base,
      name: folder,
      invalid: `SKILL.md cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
  const parsed = parseCached(file, folder, stamp);
  if (!parsed.ok) return { ...base, name: parsed.name ?? folder, invalid: parsed.error };
  return { ...base, name: parsed.meta.name, meta: parsed.meta };
}

/** All skills of the roots, in precedence order; the first valid copy of each name is the one in use. */
export function discoverSkills(roots: readonly SkillRoot[]): FoundSkill[] {
  const found: FoundSkill[] = [];
  const winners = new Map<string, FoundSkill>();
  for (const root of roots) {
    for (const { dir, file, escape } of skillFiles(root)) {
      const skill = readSkill(root, dir, file, escape);
      if (!skill.invalid) {
        const winner = winners.get(skill.name);
        if (winner) skill.shadowedBy = `${winner.source}: ${winner.file}`;
        else winners.set(skill.name, skill);
      }
      found.push(skill);
    }
  }
  return found;
}

/** The roots for a workspace, in precedence order (paths resolved, duplicates dropped). */
export function skillRoots(options: {
  workspaceDir: string;
  stateDir: string;
  bundledDir: string;
  pluginDirs: ReadonlyArray<{ pluginId: string; dir: string }>;
  extraDirs: readonly string[];
}): SkillRoot[] {
  const roots: SkillRoot[] = [
    { source: 'workspace', dir: join(options.workspaceDir, 'skills') },
    { source: 'managed', dir: join(options.stateDir, 'skills') },
    { source: 'bundled', dir: options.bundledDir },
    ...options.pluginDirs.map((entry) => ({ source: 'plugin' as const, dir: entry.dir, pluginId: entry.pluginId })),
    ...options.extraDirs.map((dir) => ({ source: 'extra' as const, dir })),
  ];
  const seen = new Set<string>();
  return roots
    .map((root) => ({ ...root, dir: resolve(root.dir) }))
    .filter((root) => (seen.has(root.dir) ? false : (seen.add(root.dir), true)));
}
