/**
 * OpenClaw's built-in system agent (the "OpenClaw" assistant that walks a user through setup
 * and answers questions about the install) and its native-hook relay, in OpenClaw's shapes.
 * claw has neither: its setup is `claw onboard` (the wizard.* methods) and `claw models
 * status`. setup.detect reports what claw's config says (the default agent's workspace and
 * model) with no detected candidates, the chat history is empty, verification reports the
 * system agent unavailable, and starting a chat, an activation or a hook relay is refused.
 */
import { agentPaths, agentValue, defaultAgentId, modelChain, type ModelSetting } from '../../sdk/agent/index.js';
import type { PluginApi } from '../../sdk/index.js';
import { absent, requiring } from './absent-kit.js';

const NO_SYSTEM_AGENT =
  'claw has no OpenClaw system agent (set up with `claw onboard`, check models with `claw models status`)';

export function registerAbsentSystemAgent(api: PluginApi): void {
  const kernel = api.kernel;

  api.registerGatewayMethod('openclaw.setup.detect', {
    params: { type: 'object', properties: { agentId: { type: 'string', minLength: 1 } } },
    scope: 'operator.admin',
    description:
      "Setup options in OpenClaw's shape: the agent's workspace and configured model from claw's config, no detected candidates.",
    handler: (params: { agentId?: string }) => {
      const config = kernel.config();
      const agentId = params.agentId ?? defaultAgentId(config);
      const configuredModel = modelChain(agentValue<ModelSetting>(config, agentId, 'model'))[0];
      return {
        manualProviders: [],
        authOptions: [],
        prepareOptions: [],
        nativeSessionCatalogs: [],
        nativeSessionCatalogPreferenceRequired: false,
        workspace: agentPaths(config, agentId, kernel.paths).workspaceDir,
        setupComplete: configuredModel !== undefined,
        candidates: [],
        unavailableCandidates: [],
        recommendedInstalls: [],
        ...(configuredModel ? { configuredModel } : {}),
      };
    },
  });

  api.registerGatewayMethod('openclaw.setup.verify', {
    params: { type: 'object' },
    scope: 'operator.admin',
    description: "Verify setup inference: OpenClaw's unavailable verdict, claw has no system agent to run it.",
    handler: () => ({ ok: false, status: 'unavailable', error: NO_SYSTEM_AGENT }),
  });

  api.registerGatewayMethod('openclaw.setup.activate.start', {
    params: requiring('sessionId'),
    scope: 'operator.admin',
    description: 'Start a setup activation: unavailable, claw has no system agent.',
    handler: () => absent(NO_SYSTEM_AGENT),
  });

  api.registerGatewayMethod('openclaw.chat.history', {
    params: { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } } },
    scope: 'operator.admin',
    description: 'Turns with the system agent, empty: claw has none.',
    handler: () => ({ turns: [] }),
  });

  api.registerGatewayMethod('openclaw.chat', {
    params: requiring('sessionId'),
    scope: 'operator.admin',
    description:
      "Chat with the system agent. claw has none (chat.send talks to your agents): the Control UI's greeting request (no message) gets an optional welcome saying where setup lives; a message is unavailable.",
    handler: (params: { sessionId: string; message?: string; wizardAnswer?: unknown; wizardCancel?: unknown }) => {
      const greetingOnly =
        params.wizardAnswer === undefined && params.wizardCancel === undefined && !params.message?.trim();
      if (!greetingOnly) return absent(NO_SYSTEM_AGENT);
      // OpenClaw's UI asks for a welcome when it opens some pages; optionalWelcome lets it stay hidden.
      return {
        sessionId: params.sessionId,
        reply: 'claw has no built-in setup assistant: run `claw onboard` to set up models, channels and the service.',
        optionalWelcome: true,
        action: 'none',
      };
    },
  });

  api.registerGatewayMethod('nativeHook.invoke', {
    params: { type: 'object' },
    scope: 'operator.admin',
    description: 'Relay a native harness hook: unavailable, claw has no native hook relays.',
    handler: () => absent('claw has no native hook relays'),
  });
}
