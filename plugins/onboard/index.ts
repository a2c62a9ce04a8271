/**
 * Onboarding: `claw onboard` (interactive, or `--non-interactive` from OpenClaw's flags) and
 * the gateway's `wizard.start/next/cancel/status`, which run the same flow for the Control
 * UI's setup view. The flow (flow.ts) asks through a Prompter; the contract the UI is built
 * against is in wizard-types.ts.
 */
import { definePlugin, ErrorCodes, ProtocolError, type JsonSchema } from '../../sdk/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { gatewayConfigWriter, kernelDeps, localWhatsappLogin } from './deps.js';
import { runOnboarding, SECTIONS } from './flow.js';
import { WizardInputError, WizardSessions } from './sessions.js';
import type { WizardFlow, WizardSection, WizardValue } from './wizard-types.js';

const SESSION_ID: JsonSchema = { type: 'string', minLength: 1, maxLength: 64 };

/** Wrong input to a wizard method is the caller's mistake: INVALID_REQUEST with the reason. */
async function asRequestError<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof WizardInputError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
    throw error;
  }
}

export default definePlugin({
  id: 'onboard',
  register(api) {
    api.registerCli({
      name: 'onboard',
      description: 'Set up a model, the workspace, the gateway and channels, step by step',
      run: async (argv, ctx) => {
        const { ONBOARD_HELP, onboardCommand } = await import('./cli.js');
        return cliCommand(ONBOARD_HELP, (args, context) => onboardCommand(args, context, api))(argv, ctx);
      },
    });

    const sessions = new WizardSessions();
    api.registerGatewayMethod('wizard.start', {
      scope: 'operator.admin',
      description: 'Start the setup wizard (one at a time): answers with its first step.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { flow: { enum: ['quickstart', 'manual'] }, section: { enum: [...SECTIONS] } },
      },
      handler: (params: { flow?: WizardFlow; section?: WizardSection }) =>
        asRequestError(() =>
          sessions.start(async (prompter, signal) => {
            const deps = {
              ...(await kernelDeps(api, api.kernel.env)),
              changeConfig: gatewayConfigWriter(api),
              whatsappLogin: await localWhatsappLogin(api),
              signal,
            };
            return runOnboarding(prompter, deps, params);
          }),
        ),
    });
    api.registerGatewayMethod('wizard.next', {
      scope: 'operator.admin',
      description: 'Answer the current step; answers with the next one (or done).',
      params: {
        type: 'object',
        additionalProperties: false,
        required: ['sessionId'],
        properties: {
          sessionId: SESSION_ID,
          answer: {
            type: 'object',
            additionalProperties: false,
            properties: {
              stepId: { type: 'string', minLength: 1 },
              value: {
                anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }],
              },
            },
          },
        },
      },
      handler: (params: { sessionId: string; answer?: { stepId?: string; value?: WizardValue } }) =>
        asRequestError(() => sessions.next(params.sessionId, params.answer)),
    });
    api.registerGatewayMethod('wizard.cancel', {
      scope: 'operator.admin',
      description: 'End a running wizard; what it saved before stays.',
      params: {
        type: 'object',
        additionalProperties: false,
        required: ['sessionId'],
        properties: { sessionId: SESSION_ID },
      },
      handler: (params: { sessionId: string }) => asRequestError(() => sessions.cancel(params.sessionId)),
    });
    api.registerGatewayMethod('wizard.status', {
      scope: 'operator.admin',
      description: "A wizard session's status: running, done, cancelled or error.",
      params: {
        type: 'object',
        additionalProperties: false,
        required: ['sessionId'],
        properties: { sessionId: SESSION_ID },
      },
      handler: (params: { sessionId: string }) => asRequestError(() => sessions.status(params.sessionId)),
    });
  },
});
