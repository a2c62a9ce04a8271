/**
 * Real Docker for the sandbox tests and the bench. The daemon is the one DOCKER_HOST names
 * (CI and local runs start it with scripts/start-dockerd.sh); dockerode comes the way claw
 * gets it, through the runtime-deps installer, into one cache dir shared by every run.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRuntimeDep, runtimeDepsDir, runtimeDepsService } from '../host/runtime-deps.js';
import { sandboxChecksService } from '../host/sandbox-checks.js';
import { DockerSandboxBackend, type DockerBackendOptions } from '../plugins/sandbox-docker/backend.js';
import { DOCKERODE } from '../plugins/sandbox-docker/client.js';
import type { SandboxSpec } from '../sdk/index.js';
import { REPO } from './helpers.js';

/** A claw state dir that only holds runtime-deps (dockerode); .ci/run fills it first. */
export const DOCKER_DEPS_STATE = join(REPO, '.cache', 'docker-runtime-state');

const START = 'eval "$(scripts/start-dockerd.sh)"  (as root; apt-get install -y docker.io busybox-static)';

/** Throws the one clear message a run without Docker gets. */
export function requireDockerHost(): string {
  const host = process.env.DOCKER_HOST;
  if (!host)
    throw new Error(`the Docker sandbox tests need a Docker daemon named by DOCKER_HOST; start one with: ${START}`);
  return host;
}

/** Makes `stateDir`'s runtime-deps the shared cache, so a plugin booted on it finds dockerode. */
export function linkDockerDeps(stateDir: string): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  symlinkSync(runtimeDepsDir(DOCKER_DEPS_STATE), runtimeDepsDir(stateDir));
}

/** A backend on the test daemon with a run-unique name prefix, the default image built if missing. */
export async function dockerTestBackend(options: Partial<DockerBackendOptions> = {}): Promise<DockerSandboxBackend> {
  requireDockerHost();
  await ensureRuntimeDep(DOCKERODE, { stateDir: DOCKER_DEPS_STATE });
  const backend = new DockerSandboxBackend({
    stateDir: DOCKER_DEPS_STATE,
    env: process.env,
    deps: runtimeDepsService({ stateDir: DOCKER_DEPS_STATE }),
    checks: sandboxChecksService,
    containerPrefix: `claw-test-${randomBytes(3).toString('hex')}-`,
    ...options,
  });
  const status = await backend.check();
  if (!status.ok) {
    if (!/image .* is missing/.test(status.reason))
      throw new Error(`Docker is not usable for the sandbox tests: ${status.reason}. Start it with: ${START}`);
    await backend.buildImage();
  }
  return backend;
}

export function sandboxSpec(workspaceRoot: string, overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  return {
    scopeKey: `agent:main:test-${randomBytes(4).toString('hex')}`,
    scope: 'session',
    agentId: 'main',
    sessionKey: 'agent:main:test',
    workspaceRoot,
    workspaceAccess: 'rw',
    workdir: '/workspace',
    network: 'none',
    binds: [],
    env: {},
    limits: {},
    configHash: 'hash-1',
    ...overrides,
  };
}
