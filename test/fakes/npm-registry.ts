/**
 * A fake npm registry on 127.0.0.1: serves packuments and tarballs for packages built
 * from folders with `npm pack`, so `npm pack <name>` and `npm install` work offline.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Published {
  name: string;
  version: string;
  tarball: Buffer;
  manifest: Record<string, unknown>;
}

export interface FakeRegistry {
  url: string;
  /** Every path requested, in order. */
  requests: string[];
  publish(packageDir: string): Published;
  close(): Promise<void>;
}

export async function startFakeRegistry(): Promise<FakeRegistry> {
  const packages = new Map<string, Published[]>();
  const requests: string[] = [];
  let base = '';

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    requests.push(path);
    const tarball = /^\/(.+)\/-\/[^/]+-(\d+\.\d+\.\d+[^/]*)\.tgz$/.exec(path);
    if (tarball) {
      const found = packages.get(tarball[1]!)?.find((p) => p.version === tarball[2]);
      if (!found) return notFound(res);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': found.tarball.length });
      return res.end(found.tarball);
    }
    const name = path.slice(1);
    const versions = packages.get(name);
    if (!versions) return notFound(res);
    const latest = versions[versions.length - 1]!;
    const body = JSON.stringify({
      name,
      'dist-tags': { latest: latest.version },
      versions: Object.fromEntries(
        versions.map((p) => [
          p.version,
          {
            ...p.manifest,
            name,
            version: p.version,
            dist: {
              tarball: `${base}/${name}/-/${name.replace(/^@[^/]+\//, '')}-${p.version}.tgz`,
              shasum: createHash('sha1').update(p.tarball).digest('hex'),
              integrity: `sha512-${createHash('sha512').update(p.tarball).digest('base64')}`,
            },
          },
        ]),
      ),
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${base}/`,
    requests,
    publish(packageDir) {
      const out = mkdtempSync(join(tmpdir(), 'claw-pack-'));
      execFileSync('npm', ['pack', packageDir, '--pack-destination', out, '--loglevel=error'], { stdio: 'pipe' });
      const file = readdirSync(out).find((entry) => entry.endsWith('.tgz'))!;
      const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Record<string, unknown>;
      const published: Published = {
        name: String(manifest.name),
        version: String(manifest.version),
        tarball: readFileSync(join(out, file)),
        manifest,
      };
      const list = packages.get(published.name) ?? [];
      list.push(published);
      packages.set(published.name, list);
      return published;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function notFound(res: import('node:http').ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":"not found"}');
}
