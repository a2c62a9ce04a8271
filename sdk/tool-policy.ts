/** The tool policy is computed by the kernel's tool choke point; the SDK re-exports it for listing tools. */
export {
  TOOL_GROUPS,
  TOOL_PROFILES,
  compileLayer,
  compileToolPolicy,
  configuredToolPolicy,
  subagentDepth,
  subagentToolPolicy,
  SUBAGENT_TOOL_DENY_ALWAYS,
  SUBAGENT_TOOL_DENY_LEAF,
  type PolicyInput,
  type PolicySubject,
  type ToolMatcher,
  type ToolPolicyLayer,
  type ToolProfile,
  type ToolsConfig,
} from '../kernel/tools/policy.js';
