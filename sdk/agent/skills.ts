/**
 * Skills as the agent stack sees them. The skills plugin finds, gates and watches SKILL.md
 * folders and offers the result as service "skills"; the agent plugin asks it, once per
 * turn, for the compact list the system prompt carries and for the slash commands of
 * user-invocable skills. Without that plugin an agent simply has no skills.
 */

/** One entry of the system prompt's skills list: the model `read`s `location` when it needs the skill. */
export interface Skill {
  name: string;
  description: string;
  /** Path of the SKILL.md the model should `read` to use the skill. */
  location: string;
}

/** Whose skills: an agent, its workspace, and the session the turn runs in. */
export interface SkillTarget {
  agentId: string;
  workspaceDir: string;
  sessionKey?: string;
  /** The session id: with `skills.load.watch` off, a session keeps the skills it started with. */
  sessionId?: string;
}

/** A user-invocable skill as a slash command. */
export interface SkillCommand {
  /** The command without "/": the skill name in `a-z0-9_`, suffixed when it clashes with another command. */
  name: string;
  skillName: string;
  description: string;
  /** The SKILL.md path. */
  location: string;
  /** `command-dispatch: tool`: the command runs this tool with the raw arguments, no model involved. */
  tool?: string;
  /** `skills.entries.<key>.config`: the operator's settings for the skill, handed to the model with the request. */
  settings?: Record<string, unknown>;
}

/** The "skills" service, as the agent plugin uses it. */
export interface SkillsService {
  /** Eligible, model-invocable skills for the system prompt, within `skills.limits.maxSkillsPromptChars`. */
  promptSkills(target: SkillTarget): Skill[];
  /** Slash commands of the eligible, user-invocable skills; `reserved` are names already taken (built-in and plugin commands). */
  commands(target: SkillTarget, reserved: readonly string[]): SkillCommand[];
}
