/**
 * The per-agent skill allowlist, as TypeBox: a build input. `npm run gen` writes it into this
 * plugin's manifest (`configContributions`) and into generated/types.ts.
 */
import { Type } from 'typebox';

/** `agents.defaults.skills` / `agents.list[].skills`: the skills an agent sees (the skills plugin reads it); an agent's list replaces the defaults'. */
export const SkillAllowlistSchema = Type.Array(Type.String({ minLength: 1 }), {
  uniqueItems: true,
  description:
    "Skill names this agent may use ([] for none); omitted: every skill. An agent's list replaces agents.defaults.skills.",
});
export const configContributions = { agents: { skills: SkillAllowlistSchema } };
