/** claw's own version, from the package.json above this file (source or dist/ layout). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function clawVersion(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'claw' && pkg.version) return (cached = pkg.version);
    } catch {
      // Keep walking up.
    }
    dir = dirname(dir);
  }
  return (cached = '0.0.0');
}
