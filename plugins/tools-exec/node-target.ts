/**
 * Which node an exec host=node call runs on. A named node (the call's, or the configured
 * binding) must itself be connected and able to run commands: it is refused, never swapped
 * for another. Without a name, the one connected node whose effective commands include
 * system.run is used; none or several is an error naming the choices.
 */
import type { NodeInfo, NodeService } from '../../sdk/index.js';

export function nodeLabel(node: Pick<NodeInfo, 'nodeId' | 'displayName'>): string {
  return node.displayName ? `${node.displayName} (${node.nodeId})` : node.nodeId;
}

const canRun = (node: NodeInfo) => node.connected && node.commands.includes('system.run');

export async function pickExecNode(
  nodes: NodeService,
  requested: string | undefined,
  bound: string | undefined,
): Promise<NodeInfo> {
  if (requested || bound) {
    const query = (requested ?? bound)!;
    let node: NodeInfo;
    try {
      node = await nodes.resolve(query);
    } catch (error) {
      throw new Error(`exec: node "${query}": ${error instanceof Error ? error.message : String(error)}`);
    }
    if (bound && requested && requested !== bound) {
      const boundNode = await nodes.resolve(bound).catch(() => undefined);
      if (boundNode?.nodeId !== node.nodeId)
        throw new Error(
          `exec: this agent is bound to node "${bound}" (tools.exec.node); node "${requested}" is a different node`,
        );
    }
    if (!node.connected) throw new Error(`exec: node ${nodeLabel(node)} is not connected; nothing was run`);
    if (!node.commands.includes('system.run'))
      throw new Error(
        `exec: node ${nodeLabel(node)} cannot run commands (system.run is not among its approved commands: ` +
          `${node.commands.length > 0 ? node.commands.join(', ') : 'none'})`,
      );
    return node;
  }
  const eligible = (await nodes.list()).filter(canRun);
  if (eligible.length === 1) return eligible[0]!;
  if (eligible.length === 0)
    throw new Error(
      'exec: host=node needs a paired, connected node that can run commands (system.run); none is connected. ' +
        'Start one with `claw node run` (or `openclaw node run`) and approve it.',
    );
  throw new Error(
    `exec: several connected nodes can run commands: ${eligible.map(nodeLabel).join(', ')}. ` +
      'Name one with node=…, or bind exec with tools.exec.node.',
  );
}
