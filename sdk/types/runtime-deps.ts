/**
 * Heavy npm packages a plugin imports on first use instead of claw installing them up front
 * (node-llama-cpp, discord.js, baileys, dockerode, playwright-core). The host offers the
 * installer as the service "runtime-deps"; see sdk/runtime-deps.ts.
 */
export interface RuntimeDependency {
  /** The npm package name, or a subpath export of it when its main entry is not importable (`pkg/client/index.js`). */
  name: string;
  /** A semver range or exact version. */
  version: string;
  /**
   * `<process.platform>-<process.arch>` → the one binary package to add for that machine,
   * picked from the package's own optionalDependencies (at the version it pins there).
   * Every other optional dependency (GPU builds, other platforms) stays out.
   */
  platformPackages?: Record<string, string>;
  /** Rough installed size, for the message shown before installing. */
  approxSizeMb?: number;
  /** Run the packages' install scripts (default false: node-llama-cpp's would try to build llama.cpp). */
  scripts?: boolean;
}

export interface RuntimeDepImportOptions {
  /** What the user should run to retry, for error messages (e.g. `claw plugins enable <id>`). */
  retryCommand?: string;
  /** Install when missing (default true); false fails with the "not installed" explanation. */
  install?: boolean;
}

/** The service "runtime-deps". Failures are errors named RuntimeDepMissingError or RuntimeDepInstallError. */
export interface RuntimeDeps {
  /** Imports `dep`: from claw's own install when it resolves there, else `<stateDir>/runtime-deps`, installed there now when missing. */
  import<T = unknown>(dep: RuntimeDependency, options?: RuntimeDepImportOptions): Promise<T>;
}
