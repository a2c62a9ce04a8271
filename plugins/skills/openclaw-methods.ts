/**
 * OpenClaw's skill methods beyond skills.status, over claw's skill catalog. claw's skills come
 * from folders (bundled, managed, workspace, plugins, extra dirs): there is no ClawHub registry
 * to search or install from, no security verdicts (those rate ClawHub skills), no skill cards,
 * and no Skill Workshop that drafts and applies proposals. Reads answer OpenClaw's empty shapes
 * for those; actions fail with UNAVAILABLE saying so. skills.bins is real.
 */
import { agentIds, unknownAgentProblem } from '../../sdk/agent/index.js';
import { ErrorCodes, ProtocolError, type JsonSchema, type KernelConfig, type PluginApi } from '../../sdk/index.js';
import type { SkillsCatalog } from './catalog.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };
const NO_WORKSHOP = 'claw has no Skill Workshop: skills are folders with a SKILL.md you write or copy in';
const NO_REGISTRY = 'claw has no skill registry (ClawHub); put skill folders in the workspace or managed skills dir';

type Scope = 'operator.read' | 'operator.admin';

export function registerSkillMethods(api: PluginApi, catalog: SkillsCatalog): void {
  const config = () => api.kernel.config() as KernelConfig;
  /** The agent a request names (default: the default agent), refused when unknown. */
  const agentOf = (params: { agentId?: unknown }) => {
    if (params.agentId === undefined) return catalog.defaultAgent();
    const problem = unknownAgentProblem(config(), String(params.agentId));
    if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
    return String(params.agentId);
  };
  const method = (name: string, scope: Scope | undefined, description: string, handler: (params: any) => unknown) =>
    api.registerGatewayMethod(name, { params: ANY_PARAMS, ...(scope ? { scope } : {}), description, handler });
  const refuse = (name: string, scope: Scope, message: string) =>
    method(name, scope, `Refused: ${message}.`, () => {
      throw new ProtocolError(ErrorCodes.UNAVAILABLE, message);
    });

  // OpenClaw reserves this for node hosts (role node, no operator scope); claw's nodes are still to come, so any
  // authenticated connection may read it, as health.
  method(
    'skills.bins',
    undefined,
    'Every binary the skills of every agent require (requires.bins and anyBins), sorted: {bins}.',
    () => {
      const bins = new Set<string>();
      for (const agentId of new Set(agentIds(config()))) {
        for (const skill of catalog.report(agentId).skills) {
          for (const bin of [...skill.requirements.bins, ...skill.requirements.anyBins]) bins.add(bin);
        }
      }
      return { bins: [...bins].sort() };
    },
  );

  method(
    'skills.securityVerdicts',
    'operator.read',
    'ClawHub security verdicts: none, as no skill comes from ClawHub.',
    (params) => {
      agentOf(params);
      return { schema: 'openclaw.skills.security-verdicts.v1', items: [] };
    },
  );
  method(
    'skills.skillCard',
    'operator.read',
    'A skill’s card: claw’s skills have none.',
    (params: { agentId?: unknown; skillKey?: unknown }) => {
      agentOf(params);
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `skill card not found for ${String(params.skillKey)}`);
    },
  );
  method('skills.search', 'operator.read', 'The ClawHub skill search, empty: claw has no skill registry.', () => ({
    results: [],
  }));
  refuse('skills.detail', 'operator.read', NO_REGISTRY);
  refuse('skills.install', 'operator.admin', NO_REGISTRY);

  method(
    'skills.proposals.list',
    'operator.read',
    'Skill Workshop proposals: none, as claw has no workshop.',
    (params) => {
      agentOf(params);
      return {
        schema: 'openclaw.skill-workshop.proposals-manifest.v1',
        updatedAt: new Date(0).toISOString(),
        proposals: [],
        installedSkills: [],
      };
    },
  );
  method('skills.proposals.inspect', 'operator.read', 'One Skill Workshop proposal: there are none.', (params) => {
    agentOf(params);
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `Skill proposal not found: ${String(params.proposalId)}`);
  });
  method('skills.workshop.read', 'operator.read', 'A workshop-generated skill: claw generates none.', (params) => {
    agentOf(params);
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `No Workshop-generated skill matched: ${String(params.name)}. ${NO_WORKSHOP}.`,
    );
  });
  for (const name of [
    'skills.proposals.create',
    'skills.proposals.evaluate',
    'skills.proposals.apply',
    'skills.proposals.requestRevision',
  ]) {
    refuse(name, 'operator.admin', NO_WORKSHOP);
  }
}
