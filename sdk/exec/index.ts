/**
 * Contracts of the exec policy. The "exec-env" service (plugin tools-exec) is exec's own env
 * policy and host environment, so an approver judges a command as exec will run it; the
 * "launchers" service (the host's, which `claw security audit` shares) names the programs that
 * run other programs or code they are given.
 */

export const EXEC_ENV_SERVICE = 'exec-env';

export interface ExecEnvService {
  /**
   * Why exec refuses this call's `env`, naming every refused variable (undefined when it would
   * run it). What the operator configured for the turn (a skill's env) is not judged.
   */
  envRefusal(
    env: Readonly<Record<string, string>> | undefined,
    call: { agentId?: string; sessionKey?: string; runId?: string },
    params: Readonly<Record<string, unknown>>,
  ): Promise<string | undefined>;
  /** The whole environment of a command exec runs on the host with `env` (git's overrides last). */
  hostEnv(env: Readonly<Record<string, string>> | undefined): Record<string, string>;
  /**
   * From `git config --list --show-scope --name-only -z` run with `hostEnv`: the repository's
   * own keys that could still make git run a program.
   */
  riskyGitConfig(listing: string): string[];
}

export const LAUNCHERS_SERVICE = 'launchers';

export interface Launchers {
  /** Is this program (a bare name or a path; the last path part counts) a launcher? */
  isLauncher(nameOrPath: string): boolean;
  /** What an approval prompt says about allowing it on the host. */
  warning(nameOrPath: string): string;
}
