/**
 * The agent stack's shared parts, for the plugins that make up an assistant and for
 * anyone writing a replacement: the `agentLoop` slot contract (loop.ts), agent settings,
 * the "models" service contract (model-service.ts; the models plugin implements selection,
 * auth profiles and failover), reply parsing, the workspace (bootstrap files), the skills
 * service contract and the context-window helpers (compaction, pruning).
 */
export * from './loop.js';
export * from './settings.js';
export * from './identity.js';
export * from './reply.js';
export * from './heartbeat-reply.js';
export * from './workspace.js';
export * from './skills.js';
export * from './context.js';
export * from '../sessions/index.js';
export * from './dispatch.js';
export * from './model-service.js';
export * from './intake.js';
export * from './subagents.js';
