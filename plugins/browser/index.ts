/**
 * The browser plugin: the `browser` tool, the `browser.request` gateway method (OpenClaw's
 * control routes), `claw browser`, and the service that closes every browser when the
 * gateway stops. Loading it is cheap: playwright-core is imported on the first launch.
 */
import { definePlugin, ErrorCodes, ProtocolError, runtimeDeps, type KernelConfig } from '../../sdk/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { guardedNet } from '../../sdk/net/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { BrowserInputError } from './actions.js';
import { BROWSER_HELP, browserCommand } from './cli.js';
import { handleBrowserRequest, ROUTES, type BrowserRequest } from './routes.js';
import { BrowserService } from './service.js';
import type { BrowserSection } from './settings.js';
import { browserTool } from './tool.js';

export default definePlugin({
  id: 'browser',
  register(api) {
    const section = api.section<BrowserSection>('browser');
    const service = new BrowserService(
      () => section,
      api.kernel.paths.stateDir,
      api.logger,
      runtimeDeps(api.kernel, 'the browser'),
      guardedNet(api.kernel, 'the browser'),
    );
    const config = () => api.kernel.config() as KernelConfig;

    const router = () => requireService<SandboxRouter>(api.kernel, SANDBOX_ROUTE_SERVICE, 'the browser tool');
    api.registerTool(browserTool(service, config, api.kernel.paths.stateDir, router));
    api.registerGatewayMethod('browser.request', {
      scope: 'operator.admin',
      sideEffect: true,
      description: `The browser control routes: {method, path, query?, body?} with ${ROUTES.join(', ')}; query.profile picks the profile.`,
      params: {
        type: 'object',
        required: ['method', 'path'],
        additionalProperties: false,
        properties: {
          method: { enum: ['GET', 'POST', 'DELETE'] },
          path: { type: 'string', minLength: 1, maxLength: 500, pattern: '^/' },
          query: { type: 'object' },
          body: { type: 'object' },
          idempotencyKey: { type: 'string', minLength: 1, maxLength: 200 },
        },
      },
      handler: async ({ idempotencyKey: _key, ...params }: BrowserRequest & { idempotencyKey?: string }) => {
        try {
          return await handleBrowserRequest(service, params);
        } catch (error) {
          if (error instanceof BrowserInputError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
          throw new ProtocolError(ErrorCodes.UNAVAILABLE, (error as Error).message.split('\n')[0]!);
        }
      },
    });
    api.registerService({
      id: 'browser',
      // request: the control routes for a node's browser.proxy, which cannot import this plugin's files.
      api: { service, request: (request: BrowserRequest) => handleBrowserRequest(service, request) },
      start() {},
      stop: () => service.stopAll(),
    });
    api.registerCli({
      name: 'browser',
      description: "Drive the agent's browser",
      run: cliCommand(BROWSER_HELP, (argv, ctx) => browserCommand(argv, ctx)),
    });
  },
});
