/**
 * The Docker Engine API through dockerode, typed by the few calls this backend makes (the
 * package ships no types, and it is not installed with claw: see DOCKERODE).
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import type { RuntimeDependency, RuntimeDeps } from '../../sdk/index.js';

/** Same entry as the manifest's `runtimeDependencies` (test/sandbox-docker.test.ts keeps them equal). */
export const DOCKERODE: RuntimeDependency = { name: 'dockerode', version: '^5.0.1', approxSizeMb: 12 };

export interface ContainerSummary {
  Id: string;
  Names: string[];
  Image: string;
  State: string;
  Created: number;
  Labels: Record<string, string>;
}

export interface ExecHandle {
  start(options: { hijack: boolean; stdin: boolean }): Promise<Duplex>;
  inspect(): Promise<{ Running: boolean; ExitCode: number | null }>;
}

export interface ContainerHandle {
  id: string;
  start(): Promise<unknown>;
  inspect(): Promise<{
    Id: string;
    State: { Running: boolean; Status: string };
    Config: { Labels: Record<string, string> };
  }>;
  remove(options: { force: boolean }): Promise<unknown>;
  exec(options: Record<string, unknown>): Promise<ExecHandle>;
}

export interface DockerClient {
  ping(): Promise<unknown>;
  listContainers(options: { all: boolean; filters: string }): Promise<ContainerSummary[]>;
  createContainer(options: Record<string, unknown>): Promise<ContainerHandle>;
  getContainer(id: string): ContainerHandle;
  getImage(name: string): { inspect(): Promise<unknown>; remove(options?: { force?: boolean }): Promise<unknown> };
  importImage(file: Readable, options: { repo: string; tag: string; changes?: string[] }): Promise<Readable>;
  modem: {
    demuxStream(stream: Readable, stdout: Writable, stderr: Writable): void;
    followProgress(stream: Readable, done: (error: Error | null, output: unknown[]) => void): void;
  };
}

/** Where the daemon listens, from DOCKER_HOST as the docker CLI reads it (default /var/run/docker.sock). */
export function daemonAddress(
  env: Readonly<Record<string, string | undefined>>,
): { socketPath: string } | { host: string; port: number; protocol: 'http' } {
  const host = env.DOCKER_HOST?.trim();
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) || '/var/run/docker.sock' };
  const tcp = /^tcp:\/\/([^:/]+):(\d+)\/?$/.exec(host);
  if (tcp) return { host: tcp[1]!, port: Number(tcp[2]), protocol: 'http' };
  throw new Error(`DOCKER_HOST "${host}" is not understood: use unix:///path/to/docker.sock or tcp://host:port`);
}

export function describeAddress(address: ReturnType<typeof daemonAddress>): string {
  return 'socketPath' in address ? `unix://${address.socketPath}` : `tcp://${address.host}:${address.port}`;
}

/** A client for the daemon at `env`'s DOCKER_HOST; dockerode is installed on first use. */
export async function connectDocker(
  env: Readonly<Record<string, string | undefined>>,
  deps: RuntimeDeps,
): Promise<DockerClient> {
  const address = daemonAddress(env);
  const mod = await deps.import<unknown>(DOCKERODE, { retryCommand: 'claw plugins enable sandbox-docker' });
  // A CommonJS package: `default` under Node's ESM loader; the plugin loader (jiti) may
  // hand over the exports object itself or wrap it once more.
  let Docker = mod as { default?: unknown } | ((...args: unknown[]) => unknown);
  for (let depth = 0; typeof Docker !== 'function' && Docker?.default && depth < 2; depth++)
    Docker = Docker.default as typeof Docker;
  if (typeof Docker !== 'function') throw new Error('dockerode did not export its Docker class');
  return new (Docker as unknown as new (options: object) => DockerClient)(address);
}
