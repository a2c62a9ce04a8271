/**
 * The node host plugin: `claw node …`. It registers only the command; the node host's
 * modules load when `claw node run` starts.
 */
import { definePlugin } from '../../sdk/index.js';
import { cliCommand } from '../../sdk/cli.js';

export default definePlugin({
  id: 'node-host',
  register(api) {
    api.registerCli({
      name: 'node',
      description: 'Run this machine as a node of a gateway',
      run: async (argv, ctx) => {
        const { nodeCommand, NODE_HELP } = await import('./cli.js');
        return cliCommand(NODE_HELP, (rest, context) => nodeCommand(rest, context, api.kernel))(argv, ctx);
      },
    });
  },
});
