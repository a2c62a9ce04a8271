/**
 * The `nodes` tool (OpenClaw's name and params): the gateway's paired nodes and sending one a
 * command. `run` is exec host=node by another name — the same node choice, plan, approvals
 * and output — so a shell command reaches a node one way only; `invoke` refuses the commands
 * that would go around that path.
 */
import {
  errorResult,
  jsonResult,
  NODES_SERVICE,
  type NodeInfo,
  type NodeService,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { guard, optionalEnv, optionalNumber, optionalString, ParamError, requiredString } from './args.js';
import { describeEnvRefusals, operatorExecEnv, refusedExecEnv } from './env-policy.js';
import { execPlacementConfig } from './exec-target.js';
import { invokeErrorCode, runOnNode, type NodeRunDeps } from './node-run.js';

type Params = Record<string, unknown>;

export const NODES_ACTIONS = ['status', 'list', 'describe', 'notify', 'invoke', 'run'] as const;

/**
 * Never through invoke: shell commands run only by exec's path (plan, both sides' approvals),
 * and an agent must not rewrite a node's exec approvals.
 */
const RESERVED = new Set(['system.run', 'system.run.prepare', 'system.execapprovals.set']);

export interface NodesToolDeps extends NodeRunDeps {
  liveConfig(): Readonly<Record<string, unknown>>;
  /** Default run limit in seconds (tools-exec's timeoutSeconds). */
  timeoutSeconds: number;
}

export function createNodesTool(deps: NodesToolDeps): ToolDefinition<Params> {
  return {
    name: 'nodes',
    label: 'Nodes',
    description:
      'Paired nodes (other machines and browser tabs connected to the gateway). status/list: every node with what it can do; ' +
      'describe: one node; notify: show a notification on a node (title/body); invoke: send a node command ' +
      '(invokeCommand, invokeParamsJson); run: a shell command on a node, exactly like exec with host=node ' +
      '(same approvals; it waits for the command to finish and never goes to the background).',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        action: { enum: [...NODES_ACTIONS] },
        node: { type: 'string', minLength: 1, description: 'Node id, name or IP (describe, notify, invoke, run)' },
        title: { type: 'string', description: 'notify: the title' },
        body: { type: 'string', description: 'notify: the text' },
        sound: { type: 'string', description: 'notify: a sound name' },
        priority: { enum: ['passive', 'active', 'timeSensitive'] },
        delivery: { enum: ['system', 'overlay', 'auto'] },
        invokeCommand: { type: 'string', minLength: 1, description: 'invoke: the node command, e.g. device.info' },
        invokeParamsJson: { type: 'string', description: 'invoke: the command params as JSON' },
        invokeTimeoutMs: { type: 'integer', minimum: 1, description: 'invoke: how long the node has to answer' },
        command: { type: 'string', minLength: 1, description: 'run: the shell command' },
        workdir: { type: 'string', description: "run: the working directory on the node (default: the node host's)" },
        env: { type: 'object', additionalProperties: { type: 'string' }, description: 'run: as exec env' },
        timeoutSeconds: { type: 'number', minimum: 0, description: 'run: seconds before the node kills it' },
      },
      required: ['action'],
    },
    execute: (params, ctx) => guard('nodes', () => runAction(params, ctx, deps)),
    // run is a host command: the gateway's exec approvals gate it as they gate exec host=node.
    approval: (params) =>
      params.action === 'run'
        ? {
            service: 'exec-approvals',
            request: {
              command: params.command,
              cwd: typeof params.workdir === 'string' ? params.workdir : '',
              host: 'node',
              ...(typeof params.node === 'string' ? { node: params.node } : {}),
              ...(params.env ? { env: params.env } : {}),
            },
          }
        : undefined,
  };
}

async function runAction(params: Params, ctx: ToolContext, deps: NodesToolDeps): Promise<ToolResult> {
  const action = requiredString(params, 'action');
  const nodes = await requireService<NodeService>(deps.kernel, NODES_SERVICE, 'the nodes tool');
  const one = async (): Promise<NodeInfo> => nodes.resolve(requiredString(params, 'node'));
  try {
    switch (action) {
      case 'status':
      case 'list': {
        const list = await nodes.list();
        return jsonResult({ ts: Date.now(), nodes: list });
      }
      case 'describe':
        return jsonResult(await one());
      case 'notify': {
        const title = (optionalString(params, 'title') ?? '').trim();
        const body = (optionalString(params, 'body') ?? '').trim();
        if (!title && !body) throw new ParamError('notify needs a title or a body');
        const node = await one();
        await nodes.invoke(
          node.nodeId,
          'system.notify',
          {
            title,
            body,
            ...pick(params, ['sound', 'priority', 'delivery']),
          },
          { sessionKey: ctx.sessionKey, signal: ctx.signal },
        );
        return jsonResult({ ok: true, nodeId: node.nodeId });
      }
      case 'invoke': {
        const command = requiredString(params, 'invokeCommand');
        if (RESERVED.has(command.toLowerCase()))
          throw new ParamError(
            `invokeCommand "${command}" is not available here: shell commands run through exec with host=node ` +
              '(or nodes action=run), and a node’s exec approvals are changed by its operator',
          );
        const node = await one();
        const payload = await nodes.invoke(node.nodeId, command, parseJson(params), {
          ...(params.invokeTimeoutMs !== undefined
            ? { timeoutMs: optionalNumber(params, 'invokeTimeoutMs', { minimum: 1, integer: true }) }
            : {}),
          sessionKey: ctx.sessionKey,
          signal: ctx.signal,
        });
        return jsonResult({ ok: true, nodeId: node.nodeId, command, payload });
      }
      case 'run':
        return await runCommand(params, ctx, deps);
      default:
        throw new ParamError(`unknown action "${action}" (one of ${NODES_ACTIONS.join(', ')})`);
    }
  } catch (error) {
    const code = invokeErrorCode(error);
    if (code) return errorResult(`nodes ${action}: ${(error as Error).message}`, { code });
    throw error;
  }
}

async function runCommand(params: Params, ctx: ToolContext, deps: NodesToolDeps): Promise<ToolResult> {
  const command = requiredString(params, 'command');
  const env = optionalEnv(params, 'env');
  const refusals = refusedExecEnv(env, await operatorExecEnv(deps.kernel.capabilities, ctx, params));
  if (refusals.length > 0) return errorResult(`nodes run: refused: ${describeEnvRefusals(refusals)}`);
  const placement = execPlacementConfig(deps.liveConfig(), ctx.agentId ?? 'main');
  const workdir = optionalString(params, 'workdir');
  return runOnNode(
    {
      command,
      ...(workdir ? { workdir } : {}),
      ...(env ? { env } : {}),
      timeoutSeconds: optionalNumber(params, 'timeoutSeconds', { minimum: 0 }) ?? deps.timeoutSeconds,
      ...(optionalString(params, 'node') ? { node: optionalString(params, 'node') } : {}),
      ...(placement.node ? { boundNode: placement.node } : {}),
    },
    ctx,
    deps,
  );
}

function pick(params: Params, names: string[]): Params {
  return Object.fromEntries(
    names.filter((name) => typeof params[name] === 'string').map((name) => [name, params[name]]),
  );
}

function parseJson(params: Params): unknown {
  const text = (optionalString(params, 'invokeParamsJson') ?? '').trim();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ParamError(`invokeParamsJson must be valid JSON: ${(error as Error).message}`);
  }
}
