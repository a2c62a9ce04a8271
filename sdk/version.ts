/** claw's own package: its root folder and version, from the package.json above this file (source or dist/ layout). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm name of this package (`claw` on the registry is an unrelated package). */
export const CLAW_PACKAGE_NAME = '@claw-assistant/claw';

let found: { root?: string; version: string } | undefined;

function find(): { root?: string; version: string } {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === CLAW_PACKAGE_NAME && pkg.version) return (found = { root: dir, version: pkg.version });
    } catch {
      // Keep walking up.
    }
    dir = dirname(dir);
  }
  return (found = { version: '0.0.0' });
}

export function clawVersion(): string {
  return find().version;
}

/** The folder holding claw's package.json (the package root plugins resolve `@claw-assistant/claw` to). */
export function clawPackageRoot(): string | undefined {
  return find().root;
}
