/**
 * The agent stack's shared parts, for the plugins that make up an assistant and for
 * anyone writing a replacement: the `agentLoop` slot contract and the kit a loop builds on
 * (loop.ts), agents as the config names them and the AgentSettings shape, the agent service
 * contract (dispatch.ts), the "models" service contract (model-service.ts; the models plugin
 * implements settings, selection, auth profiles and failover), reply directives, the skills
 * service contract and workspace creation.
 */
export * from './loop.js';
export * from './settings.js';
export * from './identity.js';
export * from './reply.js';
export * from './heartbeat-reply.js';
export * from './workspace.js';
export * from './skills.js';
export * from '../sessions/index.js';
export * from './dispatch.js';
export * from './model-service.js';
export * from './intake.js';
export * from './subagents.js';
