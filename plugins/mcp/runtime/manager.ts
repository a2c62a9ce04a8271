/**
 * The MCP client runtime of one gateway: which configured servers run, the tools they add,
 * and the calls into them. Servers start lazily (`ensure`, from before_agent_start, a probe
 * or a direct tools.invoke) and only when the agent could use at least one of their tools;
 * each is kept alive per gateway and retired when its config entry changes or goes. A call
 * from a sandboxed session runs in that session's own instance of a stdio server, spawned
 * inside its sandbox. Every tool registered here is called through the kernel's tool choke
 * point like any other: policy, hooks, params check, sandbox routing, approval, masking.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  errorResult,
  TOOL_POLICY_SERVICE,
  type PluginApi,
  type SandboxInstance,
  type ToolContext,
  type ToolDefinition,
  type ToolPolicyService,
  type ToolResult,
} from '../../../sdk/index.js';
import { requireService } from '../../../sdk/services.js';
import {
  agentToolName,
  mcpSection,
  resolveServer,
  serverServesAgent,
  toolFilter,
  type McpServerConfig,
  type ResolvedServer,
} from '../config.js';
import { connectServer } from '../connect.js';
import { toToolResult, type McpCallResult } from './results.js';
import { ServerRuntime, type Live } from './server.js';
import { utilityTools } from './utility-tools.js';

export interface ServerStatus {
  name: string;
  transport: string;
  enabled: boolean;
  state: 'idle' | 'starting' | 'connected' | 'crashed' | 'disabled';
  tools: string[];
  restarts: number;
  lastError?: string;
  pid?: number;
  connectedAt?: number;
  /** Instances running inside sessions' sandboxes. */
  sandboxInstances: number;
}

export interface CallSubject {
  agentId?: string;
  sessionKey?: string;
  /** "provider/model", for byProvider policy layers. */
  model?: string;
}

interface SandboxedInstance {
  server: string;
  sandboxId: string;
  live: Promise<Live>;
  lastUsed: number;
}

/** Tools a server's filter lets through, as their agent-visible names. */
function filtered(server: ServerRuntime, tools: Tool[]): Tool[] {
  const allow = toolFilter(server.config.toolFilter);
  return tools.filter((tool) => allow(tool.name));
}

/** A tool's input schema as the kernel's validator takes it (no `$schema`: MCP servers name various drafts). */
function parameters(schema: Tool['inputSchema']): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

const fingerprint = (config: McpServerConfig): string => JSON.stringify(config);

export class McpRuntime {
  private readonly servers = new Map<string, ServerRuntime>();
  /** `<server>\0<sandbox id>` → the server's instance inside that sandbox. */
  private readonly sandboxed = new Map<string, SandboxedInstance>();
  /** Agent tool name → its disposer, per server. */
  private readonly registered = new Map<string, Map<string, () => void>>();
  private idleTimer?: NodeJS.Timeout;

  constructor(private readonly api: PluginApi) {}

  /** Enabled servers in the live config; runtimes whose entry changed or went are retired. */
  private sync(): Map<string, McpServerConfig> {
    const configured = new Map(
      Object.entries(mcpSection(this.api.kernel.config()).servers ?? {}).filter(
        ([, server]) => server.enabled !== false,
      ),
    );
    for (const [name, runtime] of this.servers) {
      const now = configured.get(name);
      if (!now || fingerprint(now) !== runtime.fingerprint) void this.retire(name);
    }
    return configured;
  }

  /**
   * The server resolved, its header values known to the redactor: whatever the header is
   * called, a server or a proxy echoing it back must not put it in front of the model or a log.
   */
  private resolve(name: string, config: McpServerConfig): ResolvedServer {
    const resolved = resolveServer(name, config);
    if (resolved.transport !== 'stdio')
      for (const value of Object.values(resolved.headers)) {
        this.api.kernel.redact.add(value);
        this.api.kernel.redact.add(/^\S+\s+(\S{8,})$/.exec(value)?.[1]);
      }
    return resolved;
  }

  /** Retires the running servers whose config entry changed, went or was disabled. */
  retireChanged(): void {
    this.sync();
  }

  private runtime(name: string, config: McpServerConfig): ServerRuntime {
    let runtime = this.servers.get(name);
    if (!runtime) {
      runtime = new ServerRuntime(name, config, this.resolve(name, config), fingerprint(config), {
        connectOptions: {
          kernel: this.api.kernel,
          workspaceDir: this.api.kernel.paths.workspaceDir,
          warn: (message) => this.api.logger.warn(message),
        },
        onTools: (server, tools) => this.register(server, tools),
        log: (level, message) => this.api.logger[level](message),
      });
      this.servers.set(name, runtime);
    }
    return runtime;
  }

  /**
   * Whether the tool policy leaves this agent any tool of `server`. Tool names are not known
   * before the server runs, so a name no allow entry mentions stands for them all: a
   * `docs__*` deny, or an allow list or profile without MCP tools, keeps the server down; an
   * allow entry naming one of its tools lets it start (the choke point filters the rest).
   */
  private async mayUse(server: string, subject: CallSubject): Promise<boolean> {
    const service = await requireService<ToolPolicyService>(this.api.kernel, TOOL_POLICY_SERVICE, 'MCP servers');
    const policy = service.configured(this.api.kernel.config(), subject);
    const restriction = service.subagent(this.api.kernel.config(), subject.agentId, subject.sessionKey);
    const probe = `${server}__\u0000any`;
    if (policy(probe) && (!restriction || restriction(probe))) return true;
    const prefix = `${server}__`.toLowerCase();
    const mentions = JSON.stringify([this.api.kernel.config().tools, this.api.kernel.config().agents])
      .toLowerCase()
      .includes(`"${prefix}`);
    return mentions;
  }

  /** Whether `toolName` is `<server>__<tool>` of an enabled server whose tools are not registered yet. */
  notStarted(toolName: string): boolean {
    const server = toolName.slice(0, Math.max(0, toolName.indexOf('__')));
    return server !== '' && !this.registered.has(server) && this.sync().has(server);
  }

  /** Connect every enabled server this agent may use and register its tools; failures are logged, not thrown. */
  async ensure(subject: CallSubject): Promise<void> {
    const configured = this.sync();
    const starting: Array<Promise<unknown>> = [];
    for (const [name, config] of configured) {
      if (!serverServesAgent(config, subject.agentId)) continue;
      if (!(await this.mayUse(name, subject))) continue;
      let runtime: ServerRuntime;
      try {
        runtime = this.runtime(name, config);
      } catch (error) {
        this.api.logger.warn((error as Error).message);
        continue;
      }
      starting.push(
        runtime.connected().catch((error: Error) => this.api.logger.warn(`MCP server "${name}": ${error.message}`)),
      );
    }
    await Promise.all(starting);
  }

  /** Registers `tools` (filtered) for `server`, replacing what it had. */
  private register(server: ServerRuntime, tools: Tool[]): void {
    const old = this.registered.get(server.name) ?? new Map<string, () => void>();
    for (const dispose of old.values()) dispose();
    const current = new Map<string, () => void>();
    const connection = server.live?.connection;
    const definitions = [
      ...filtered(server, tools).map((tool) => this.toolDefinition(server, tool)),
      ...(connection ? utilityTools(server, connection.capabilities, (ctx) => this.connectionFor(server, ctx)) : []),
    ];
    for (const definition of definitions) {
      if (current.has(definition.name)) continue;
      try {
        current.set(definition.name, this.api.registerTool(definition));
      } catch (error) {
        this.api.logger.warn(
          `MCP server "${server.name}": tool ${definition.name} not added: ${(error as Error).message}`,
        );
      }
    }
    this.registered.set(server.name, current);
  }

  private toolDefinition(server: ServerRuntime, tool: Tool): ToolDefinition {
    const mode = server.resolved.approvalMode ?? 'auto';
    return {
      name: agentToolName(server.name, tool.name),
      ...(tool.title ? { label: tool.title } : {}),
      description: `${tool.description?.trim() || `The ${tool.name} tool`} (MCP server ${server.name})`,
      parameters: parameters(tool.inputSchema),
      runsInSandbox: server.resolved.transport === 'stdio',
      approval: (params, ctx) =>
        mode === 'approve'
          ? undefined
          : {
              service: 'exec-approvals',
              request: {
                kind: 'mcp',
                server: server.name,
                tool: tool.name,
                arguments: params,
                agentId: ctx.agentId ?? 'main',
                annotations: tool.annotations ?? {},
                approvalMode: mode,
              },
            },
      execute: (params, ctx) => this.call(server, tool.name, params, ctx),
    };
  }

  /** The connection a call from `ctx` uses: its sandbox's own instance, or the gateway's. */
  async connectionFor(server: ServerRuntime, ctx: ToolContext): Promise<Live> {
    const sandbox = ctx.sandbox as SandboxInstance | undefined;
    if (!sandbox || server.resolved.transport !== 'stdio') return server.connected();
    const key = `${server.name}\0${sandbox.id}`;
    let instance = this.sandboxed.get(key);
    if (instance) {
      const live = await instance.live.catch(() => undefined);
      if (live && !live.lost && server.state !== 'retired') {
        instance.lastUsed = Date.now();
        return live;
      }
      this.sandboxed.delete(key);
    }
    const live = {} as Live;
    const connecting = connectServer(server.resolved, {
      kernel: this.api.kernel,
      sandbox,
      warn: (message) => this.api.logger.warn(message),
      onLost: (reason) => {
        live.lost = reason;
        if (this.sandboxed.get(key)?.live === promise) this.sandboxed.delete(key);
      },
    }).then((connection) => Object.assign(live, { connection }));
    const promise = connecting;
    instance = { server: server.name, sandboxId: sandbox.id, live: promise, lastUsed: Date.now() };
    this.sandboxed.set(key, instance);
    this.watchIdle();
    try {
      return await promise;
    } catch (error) {
      this.sandboxed.delete(key);
      throw error;
    }
  }

  private async call(
    server: ServerRuntime,
    tool: string,
    params: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolResult> {
    const agentName = agentToolName(server.name, tool);
    let live: Live;
    try {
      live = await this.connectionFor(server, ctx);
    } catch (error) {
      return errorResult(`MCP server "${server.name}" is not available: ${(error as Error).message}`);
    }
    const timeout = server.resolved.requestTimeoutMs;
    try {
      const result = await server.serialize(() =>
        live.connection.client.callTool({ name: tool, arguments: params }, undefined, {
          timeout,
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        }),
      );
      return toToolResult(server.name, tool, result as McpCallResult);
    } catch (error) {
      if (live.lost)
        return errorResult(
          `MCP server "${server.name}" stopped during the call to ${agentName} (${live.lost}). ` +
            'The call was not retried (it may have had effects); the server restarts for the next call.',
        );
      const message = (error as Error).message ?? String(error);
      if (/timed out|timeout/i.test(message))
        return errorResult(`${agentName} timed out after ${timeout} ms (mcp.servers.${server.name}.requestTimeoutMs)`);
      return errorResult(`${agentName} failed: ${message}`);
    }
  }

  /** Retire sandboxed instances idle longer than mcp.sessionIdleTtlMs. */
  private watchIdle(): void {
    const ttl = mcpSection(this.api.kernel.config()).sessionIdleTtlMs ?? 0;
    if (ttl <= 0 || this.idleTimer) return;
    this.idleTimer = setInterval(
      () => {
        const now = Date.now();
        for (const [key, instance] of this.sandboxed) {
          if (now - instance.lastUsed < ttl) continue;
          this.sandboxed.delete(key);
          void instance.live.then((live) => live.connection.close()).catch(() => {});
        }
        if (this.sandboxed.size === 0) {
          clearInterval(this.idleTimer);
          this.idleTimer = undefined;
        }
      },
      Math.max(1000, Math.min(ttl, 60_000)),
    );
    this.idleTimer.unref();
  }

  private async retire(name: string): Promise<void> {
    const runtime = this.servers.get(name);
    this.servers.delete(name);
    for (const dispose of this.registered.get(name)?.values() ?? []) dispose();
    this.registered.delete(name);
    const closing: Array<Promise<unknown>> = [runtime?.retire() ?? Promise.resolve()];
    for (const [key, instance] of this.sandboxed) {
      if (instance.server !== name) continue;
      this.sandboxed.delete(key);
      closing.push(instance.live.then((live) => live.connection.close()).catch(() => {}));
    }
    await Promise.all(closing);
  }

  /** Every server's live state, for `mcp.status` (configured servers first, in config order). */
  status(): ServerStatus[] {
    const servers = mcpSection(this.api.kernel.config()).servers ?? {};
    return Object.entries(servers).map(([name, config]) => {
      const runtime = this.servers.get(name);
      const enabled = config.enabled !== false;
      const state = !enabled ? 'disabled' : runtime && runtime.state !== 'retired' ? runtime.state : 'idle';
      const transport = config.transport ?? (config.command ? 'stdio' : 'sse');
      const sandboxInstances = [...this.sandboxed.values()].filter((instance) => instance.server === name).length;
      return {
        name,
        transport,
        enabled,
        state,
        tools: [...(this.registered.get(name)?.keys() ?? [])],
        restarts: runtime?.restarts ?? 0,
        ...(runtime?.lastError ? { lastError: this.api.kernel.redact.text(runtime.lastError) } : {}),
        ...(runtime?.live?.connection.pid !== undefined ? { pid: runtime.live.connection.pid } : {}),
        ...(runtime?.connectedAt ? { connectedAt: runtime.connectedAt } : {}),
        sandboxInstances,
      };
    });
  }

  /** Retires every runtime (they start again on next use, from the config as it is then); returns how many ran. */
  async reload(): Promise<number> {
    const names = [...this.servers.keys()];
    await Promise.all(names.map((name) => this.retire(name)));
    return names.length;
  }

  async stop(): Promise<void> {
    clearInterval(this.idleTimer);
    await this.reload();
  }
}
