/**
 * Every command this node host serves, as a list of command maps. A module that adds
 * commands (file transfer, browser.proxy) exports a function of the node host's context
 * returning its `{ [command]: NodeCommand }` map, and is added to COMMAND_MAPS.
 */
import type { NodeCommands } from './dispatcher.js';
import type { NodeHostContext } from './host-context.js';
import { extraNodeCommands } from './extra-commands.js';
import { systemCommands } from './system-commands.js';

export type { NodeHostContext };

const COMMAND_MAPS: ReadonlyArray<(context: NodeHostContext) => NodeCommands> = [systemCommands, extraNodeCommands];

/** All maps merged; two modules claiming one command is a programming error, reported at start. */
export function nodeCommands(context: NodeHostContext): NodeCommands {
  const merged: NodeCommands = {};
  for (const map of COMMAND_MAPS) {
    for (const [name, command] of Object.entries(map(context))) {
      if (merged[name]) throw new Error(`node host: command ${name} is defined twice`);
      merged[name] = command;
    }
  }
  return merged;
}
