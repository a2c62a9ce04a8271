/** `claw update` against a fake npm registry on 127.0.0.1 (npm_config_registry), through the real npm. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions } from '../apps/cli/commands/maintenance/update.js';
import { clawVersion } from '../sdk/version.js';
import { claw, REPO, tempDir } from './helpers.js';

const NAME = '@claw-assistant/claw';
let server: Server;
let registry: string;
const asked: string[] = [];

beforeAll(async () => {
  const versions = ['0.0.9', clawVersion(), '99.1.0', '100.0.0-beta.2'];
  const packument = {
    name: NAME,
    'dist-tags': { latest: '99.1.0', beta: '100.0.0-beta.2', old: '0.0.9' },
    versions: Object.fromEntries(
      versions.map((version) => [
        version,
        { name: NAME, version, dist: { tarball: `http://127.0.0.1/${version}.tgz`, shasum: '0'.repeat(40) } },
      ]),
    ),
  };
  server = createServer((request, response) => {
    asked.push(request.url ?? '');
    if (decodeURIComponent(request.url ?? '') === `/${NAME}`) {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(packument));
    } else {
      response.statusCode = 404;
      response.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function npmEnv() {
  return {
    npm_config_registry: registry,
    npm_config_cache: tempDir('claw-npm-cache-'),
    npm_config_update_notifier: 'false',
    OPENCLAW_STATE_DIR: tempDir('claw-update-state-'),
  };
}

describe('claw update', () => {
  it('reports the registry version against this one, and how this install updates', async () => {
    const env = npmEnv();
    const status = await claw(['update', 'status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      ok: true,
      packageName: NAME,
      currentVersion: clawVersion(),
      tag: 'latest',
      latestVersion: '99.1.0',
      updateAvailable: true,
      // The tests run from a clone: it is updated with git, not replaced by npm.
      install: { kind: 'git', root: REPO, nextAction: `git -C ${REPO} pull && npm --prefix ${REPO} install` },
    });
    expect(asked.every((url) => decodeURIComponent(url) === `/${NAME}`)).toBe(true);

    const check = await claw(['update', '--check', '--tag', 'beta'], env);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`claw ${clawVersion()} (git at ${REPO}): 100.0.0-beta.2 is available`);
    expect(check.stdout).toContain(`Update with: git -C ${REPO} pull`);
    const older = await claw(['update', 'status', '--tag', 'old'], env);
    expect(older.stdout).toContain('old is 0.0.9, older than this one');

    // The update itself leaves a clone alone and says what to run.
    const update = await claw(['update', '--yes'], env);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toContain('claw was not installed with npm -g, so it is not updated here');
    expect(update.stdout).toContain(`git -C ${REPO} pull`);
  }, 120_000);

  it('names a tag the registry does not have, and a registry that does not answer', async () => {
    const env = npmEnv();
    const missing = await claw(['update', 'status', '--tag', 'nightly'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot check for updates: .*nightly/);
    const down = await claw(['update', 'status', '--timeout', '20'], {
      ...env,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_fetch_retries: '0',
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot check for updates: http://127.0.0.1:9/ could not be reached (ECONNREFUSED)');
    const badTag = await claw(['update', '--tag', 'x;rm -rf'], env);
    expect(badTag).toMatchObject({ code: 2, stderr: expect.stringContaining('--tag must be a dist-tag or a version') });
  }, 120_000);

  it('orders versions as semver does', () => {
    expect(compareVersions('1.2.3', '1.2.3')).toBe(0);
    expect(compareVersions('1.10.0', '1.9.9')).toBe(1);
    expect(compareVersions('2.0.0-beta.2', '2.0.0')).toBe(-1);
    expect(compareVersions('2.0.0-beta.10', '2.0.0-beta.2')).toBe(1);
    expect(compareVersions('2.0.0-alpha', '2.0.0-beta')).toBe(-1);
    expect(compareVersions('0.1.0', '0.0.9')).toBe(1);
  });
});
