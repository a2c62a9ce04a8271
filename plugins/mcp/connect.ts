/**
 * One function from a server's config to a connected MCP client: spawn the stdio server (on
 * the host, or inside a session's sandbox) or open the HTTP transport with its headers,
 * initialize, and list its tools, all within connectionTimeoutMs. The gateway's runtime and
 * `claw mcp probe` both connect through here, so a probe sees what the agent would get.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Implementation, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { KernelServices, SandboxInstance } from '../../sdk/index.js';
import type { ResolvedServer } from './config.js';
import { serverEnvironment } from './env-filter.js';
import { loadMcpSdk } from './sdk-loader.js';
import { ProcessTransport, type ServerProcess } from './stream-transport.js';

export interface ConnectOptions {
  kernel: Pick<KernelServices, 'capabilities' | 'plugins' | 'env'>;
  /** Where a stdio server without a cwd starts on the host (the agent's workspace). */
  workspaceDir?: string;
  /** Spawn the stdio server inside this sandbox instead of on the host. */
  sandbox?: SandboxInstance;
  /** Told about env entries the safety filter dropped, and other notes worth a log line. */
  warn?: (message: string) => void;
  /** The server announced notifications/tools/list_changed. */
  onToolsChanged?: () => void;
  /** The connection ended without close() being called (the process died, the stream broke). */
  onLost?: (reason: string) => void;
}

export interface McpConnection {
  server: ResolvedServer;
  client: Client;
  serverInfo?: Implementation;
  capabilities?: ServerCapabilities;
  instructions?: string;
  /** Every tool the server lists (unfiltered). */
  tools: Tool[];
  /** Warnings met while connecting (dropped env entries). */
  diagnostics: string[];
  /** The host process id of a stdio server spawned on the host. */
  pid?: number;
  /** The server's recent stderr (stdio), for error messages. */
  stderr(): string;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'claw', version: '0.1.0' };

/** How long a failed handshake waits for the server's exit, whose reason says more. */
const EXIT_GRACE_MS = 2000;

/** A POSIX-shell word: a sandbox runs `sh -c <command>`. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** Spawns on the host in its own process group, so closing ends the server and whatever it started. */
function spawnOnHost(server: Extract<ResolvedServer, { transport: 'stdio' }>, env: Record<string, string>) {
  const group = process.platform !== 'win32';
  const child = spawn(server.command, server.args, { cwd: server.cwd, env, stdio: 'pipe', detached: group });
  const exited = new Promise<{ exitCode: number | null; signal: string | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ exitCode: null, signal: null, error }));
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  const proc: ServerProcess = {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exited,
    kill: (signal) => {
      try {
        if (group && child.pid) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone.
      }
    },
  };
  return { proc, pid: child.pid, exited };
}

function spawnInSandbox(
  server: Extract<ResolvedServer, { transport: 'stdio' }>,
  env: Record<string, string>,
  sandbox: SandboxInstance,
): ServerProcess {
  const command = [server.command, ...server.args].map(shellWord).join(' ');
  const proc = sandbox.spawn({ command, ...(server.cwd ? { cwd: server.cwd } : {}), env });
  if (!proc.stdin) throw new Error(`the ${sandbox.backend} sandbox cannot give a process a stdin`);
  return { stdin: proc.stdin, stdout: proc.stdout, stderr: proc.stderr, exited: proc.exited, kill: proc.kill };
}

/** Every page of the server's tool list. */
export async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function describeExit(exit: { exitCode: number | null; signal: string | null } | undefined, stderr: string): string {
  const how = !exit ? 'closed' : exit.signal ? `was killed (${exit.signal})` : `exited with code ${exit.exitCode}`;
  const tail = stderr.trim().split('\n').slice(-3).join(' | ');
  return tail ? `${how}; stderr: ${tail}` : how;
}

/** Connects, initializes and lists tools; throws a message naming the server when any step fails or times out. */
export async function connectServer(server: ResolvedServer, options: ConnectOptions): Promise<McpConnection> {
  const sdk = await loadMcpSdk(options.kernel);
  const diagnostics: string[] = [];
  let transport: Transport;
  let processTransport: ProcessTransport | undefined;
  let pid: number | undefined;
  let spawnError: Promise<Error | undefined> = Promise.resolve(undefined);
  if (server.transport === 'stdio') {
    const { env, dropped } = serverEnvironment(server.env, options.kernel.env);
    for (const { name, reason } of dropped) {
      const note = `MCP server "${server.name}": env ${name} dropped (${reason}); set it on the gateway's own environment if the server needs it`;
      diagnostics.push(note);
      options.warn?.(note);
    }
    let proc: ServerProcess;
    if (options.sandbox) proc = spawnInSandbox(server, env, options.sandbox);
    else {
      // Without a cwd a server starts in the agent's workspace, as it does inside a sandbox.
      const cwd =
        server.cwd ?? (options.workspaceDir && existsSync(options.workspaceDir) ? options.workspaceDir : undefined);
      const spawned = spawnOnHost({ ...server, ...(cwd ? { cwd } : {}) }, env);
      proc = spawned.proc;
      pid = spawned.pid;
      spawnError = spawned.exited.then((exit) => exit.error);
    }
    transport = processTransport = new ProcessTransport(proc);
  } else {
    const url = new URL(server.url);
    const requestInit = { headers: server.headers };
    transport =
      server.transport === 'streamable-http'
        ? new sdk.StreamableHTTPClientTransport(url, { requestInit })
        : new sdk.SSEClientTransport(url, { requestInit });
  }

  const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
  let closing = false;
  let lost: (reason: string) => void = () => {};
  const lostReason = new Promise<string>((resolve) => (lost = resolve));
  client.onclose = () => {
    const reason = processTransport
      ? `the server process ${describeExit(processTransport.exit, processTransport.stderrTail)}`
      : 'the connection closed';
    lost(reason);
    if (!closing) options.onLost?.(reason);
  };
  const timeout = server.connectionTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not answer within ${timeout} ms (connectionTimeoutMs)`)), timeout);
  });
  try {
    const connecting = (async () => {
      await client.connect(transport, { timeout });
      return client.getServerCapabilities()?.tools ? listAllTools(client, timeout) : [];
    })().catch(async (error: Error) => {
      // A server that dies at once fails our first write (EPIPE) before its exit is seen; the
      // exit, with what it wrote to stderr, is the error worth showing.
      if (!processTransport) throw error;
      const grace = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), EXIT_GRACE_MS).unref());
      throw new Error((await Promise.race([lostReason, grace])) ?? error.message);
    });
    const failed = spawnError.then((error) => {
      if (error)
        throw new Error(`cannot start ${server.transport === 'stdio' ? server.command : ''}: ${error.message}`);
      return new Promise<never>(() => {});
    });
    // A server that dies during the handshake fails at once, with its stderr, not at the timeout.
    const died = lostReason.then((reason) => {
      throw new Error(reason);
    });
    const tools = await Promise.race([connecting, deadline, failed, died]);
    if (client.getServerCapabilities()?.tools?.listChanged)
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => options.onToolsChanged?.());
    return {
      server,
      client,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions(),
      tools,
      diagnostics,
      ...(pid !== undefined ? { pid } : {}),
      stderr: () => processTransport?.stderrTail ?? '',
      close: async () => {
        closing = true;
        await client.close().catch(() => {});
      },
    };
  } catch (error) {
    closing = true;
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    throw new Error(`MCP server "${server.name}" could not connect: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
