/**
 * The agent workspace as `claw setup` and `claw agents add` create it: the templates the
 * agent plugin ships, copied in (never over existing files).
 */
import { chmodSync, constants, copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../fs.js';

/** Create the workspace and copy templates that are not there yet. Returns what was created. */
/** `templatesDir` holds the files a new workspace starts with (the agent plugin ships them). */
export function ensureWorkspace(workspaceDir: string, templatesDir: string): { created: string[]; kept: string[] } {
  const templates = readdirSync(templatesDir)
    .filter((file) => file.endsWith('.md'))
    .sort();
  // BOOTSTRAP.md (the first-run ritual) is seeded into a brand-new workspace only: once any
  // other workspace file exists, the ritual is done or was never wanted.
  const brandNew = ![...templates, 'MEMORY.md', 'memory.md'].some(
    (name) => name !== 'BOOTSTRAP.md' && existsSync(join(workspaceDir, name)),
  );
  ensurePrivateDir(join(workspaceDir, 'memory'));
  const created: string[] = [];
  const kept: string[] = [];
  for (const name of templates) {
    const target = join(workspaceDir, name);
    if (existsSync(target)) {
      kept.push(name);
      continue;
    }
    if (name === 'BOOTSTRAP.md' && !brandNew) continue;
    // COPYFILE_EXCL: a file appearing between the check and the copy is still never overwritten.
    try {
      copyFileSync(join(templatesDir, name), target, constants.COPYFILE_EXCL);
      // A copy takes the template's mode (0644 in the package); the user's copy is private.
      chmodSync(target, PRIVATE_FILE_MODE);
      created.push(name);
    } catch {
      kept.push(name);
    }
  }
  return { created, kept };
}
