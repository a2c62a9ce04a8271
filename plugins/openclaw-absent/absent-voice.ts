/**
 * Talk (realtime voice), voice wake and push notifications, as OpenClaw's clients ask for
 * them (text-to-speech is the tts plugin's): claw has no realtime audio and sends no push
 * notifications, so its catalogs and status answer empty and every session or send is
 * UNAVAILABLE. See absent-kit.ts for the rule these follow.
 */
import {
  ErrorCodes,
  ProtocolError,
  type PluginApi,
  lacks,
  registerMethodTable,
  type MethodEntry,
} from '../../sdk/index.js';
import { unavailable } from './absent-kit.js';

const TALK_SCOPE = 'operator.talk';

function talkSession(description: string): MethodEntry {
  return unavailable('talk sessions (realtime voice)', TALK_SCOPE, description);
}

function webPush(scope: string, description: string): MethodEntry {
  return unavailable('web push notifications', scope, description);
}

export function registerAbsentVoice(api: PluginApi): void {
  registerMethodTable(api, {
    'talk.catalog': {
      scope: 'operator.read',
      description: "Talk modes, transports and voice providers in OpenClaw's shape: none, claw has no voice.",
      handler: () => ({
        modes: [],
        transports: [],
        brains: [],
        speech: { providers: [] },
        transcription: { ready: false, providers: [] },
        realtime: { ready: false, providers: [] },
      }),
    },
    'talk.config': {
      scope: 'operator.read',
      description: 'Talk settings: empty, as claw has no talk section.',
      handler: () => ({ config: {} }),
    },
    'talk.voice.get': talkSession("A talk session's voice (claw has no talk sessions)."),
    'talk.voice.set': talkSession("Change a talk session's voice."),
    'talk.voice.complete': talkSession('Acknowledge a voice change.'),
    'talk.client.create': talkSession('Start a browser talk session.'),
    'talk.client.close': talkSession('Close a browser talk session.'),
    'talk.client.steer': talkSession('Steer a browser talk session.'),
    'talk.client.toolCall': talkSession('Run a tool for a browser talk session.'),
    'talk.client.transcript': talkSession('Record a browser talk session transcript.'),
    'talk.session.create': talkSession('Start a relayed talk session.'),
    'talk.session.appendAudio': talkSession('Send audio to a relayed talk session.'),
    'talk.session.cancelOutput': talkSession("Cancel a relayed talk session's output."),
    'talk.session.acknowledgeMark': talkSession('Acknowledge a playback mark.'),
    'talk.session.submitToolResult': talkSession('Answer a relayed talk session tool call.'),
    'talk.session.steer': talkSession('Steer a relayed talk session.'),
    'talk.session.close': talkSession('Close a relayed talk session.'),

    'voicewake.get': {
      scope: 'operator.read',
      description: 'Voice wake triggers: none, as claw has no voice wake.',
      handler: () => ({ triggers: [] }),
    },
    'voicewake.set': {
      scope: 'operator.write',
      description: 'Change voice wake triggers (claw has no voice wake).',
      handler: (params) => {
        if (!Array.isArray(params.triggers))
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'voicewake.set requires triggers: string[]');
        return lacks('voice wake');
      },
    },

    'push.test': unavailable('push notifications', 'operator.write', 'Send a test push to a node.', ['nodeId']),
    'push.web.vapidPublicKey': webPush('operator.write', 'The Web Push public key.'),
    'push.web.subscribe': webPush('operator.write', 'Subscribe this browser to notifications.'),
    'push.web.unsubscribe': webPush('operator.write', 'Unsubscribe this browser from notifications.'),
    'push.web.test': webPush('operator.write', 'Send a test notification to every subscribed browser.'),
    'push.web.preferences.get': webPush('operator.read', "A browser subscription's notification preferences."),
    'push.web.preferences.set': webPush('operator.write', "Change a browser subscription's notification preferences."),
  });
}
