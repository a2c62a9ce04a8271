/**
 * OpenClaw's gateway methods for features claw lacks (absent-kit.ts says which, and the rule
 * each answer follows). Nothing here runs at a gateway start: the manifest declares every
 * method, and the first call to one loads this plugin.
 */
import { definePlugin } from '../../sdk/index.js';
import { registerAbsentAudit } from './absent-audit.js';
import { registerAbsentCanvas } from './absent-canvas.js';
import { registerAbsentEnvironments } from './absent-environments.js';
import { registerAbsentFeatureMethods } from './absent-features.js';
import { registerAbsentQuestions } from './absent-questions.js';
import { registerAbsentSystemAgent } from './absent-system-agent.js';
import { registerAbsentTasks } from './absent-tasks.js';
import { registerAbsentVoice } from './absent-voice.js';
import { registerAbsentWorkspace } from './absent-workspace.js';
import { registerMeetingTranscripts } from './meeting-transcripts.js';
import { registerUserMethods } from './users.js';

export default definePlugin({
  id: 'openclaw-absent',
  register(api) {
    registerAbsentFeatureMethods(api);
    registerMeetingTranscripts(api);
    registerAbsentTasks(api);
    registerAbsentEnvironments(api);
    registerAbsentAudit(api);
    registerAbsentSystemAgent(api);
    registerAbsentQuestions(api);
    registerAbsentCanvas(api);
    registerAbsentVoice(api);
    registerAbsentWorkspace(api);
    registerUserMethods(api);
  },
});
