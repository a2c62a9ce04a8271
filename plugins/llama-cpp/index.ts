/**
 * Model provider "llama-cpp": a local GGUF model run in-process by llama.cpp.
 *
 * Importing this module stays cheap — it pulls in only the SDK and node builtins; the
 * runtime imports node-llama-cpp on the first `stream` call (installing it into the state
 * dir first when claw was installed without it, by the "runtime-deps" service) and keeps the llama.cpp backend,
 * the model and its context for every later request (one load per model file). The
 * "llama-cpp" service frees them when the kernel stops.
 *
 * An aborted request ends by throwing ModelError("aborted") (never a `done`), like the
 * HTTP providers; `usage.input` counts the whole rendered prompt and `usage.output` every
 * token generated.
 *
 * A request whose endpoint names a `modelPath` (claw onboard's live test of a file not saved
 * yet) is answered by that file, loaded for that request alone and freed after it — or by
 * the loaded model when it is the same file — so a test leaves nothing behind.
 *
 * Tools in a request are ignored: tool calling through a local model (grammar-constrained
 * function calls) is out of scope here, so the model only ever answers in text.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import {
  definePlugin,
  ModelError,
  NODE_LLAMA_CPP,
  runtimeDeps,
  type ModelInfo,
  type ModelProvider,
} from '../../sdk/index.js';
import { LlamaCppRuntime, PROVIDER_ID, type LlamaModule } from './runtime.js';

export interface LlamaCppConfig {
  modelPath?: string;
  contextSize: number;
  threads?: number;
  maxTokens: number;
  gpu: false | 'auto';
}

const MODEL_PATH_KEY = 'plugins.entries.llama-cpp.config.modelPath';

/** `~` is the home directory; a relative path is relative to the claw state dir. */
export function resolveModelPath(modelPath: string | undefined, stateDir: string): string | undefined {
  const trimmed = modelPath?.trim();
  if (!trimmed) return undefined;
  if (trimmed === '~') return homedir();
  if (trimmed.startsWith('~/') || trimmed.startsWith('~\\')) return join(homedir(), trimmed.slice(2));
  return isAbsolute(trimmed) ? trimmed : resolve(stateDir, trimmed);
}

/** The model id `models()` reports: the file name without `.gguf`. */
export function modelIdFor(modelPath: string | undefined): string {
  if (!modelPath) return 'local';
  return basename(modelPath).replace(/\.gguf$/i, '') || 'local';
}

export default definePlugin<LlamaCppConfig>({
  id: PROVIDER_ID,
  register(api) {
    const config = api.config;
    const modelPath = resolveModelPath(config.modelPath, api.kernel.paths.stateDir);
    // node-llama-cpp is not part of claw's install: found by normal resolution (dev), else
    // in <stateDir>/runtime-deps, else installed there now (`claw plugins enable llama-cpp`
    // does the same ahead of time).
    const deps = runtimeDeps(api.kernel, 'the llama-cpp provider');
    const importBackend = (): Promise<LlamaModule> =>
      deps.import<LlamaModule>(NODE_LLAMA_CPP, {
        retryCommand: `claw plugins enable ${PROVIDER_ID}`,
      });
    const runtime = new LlamaCppRuntime(
      {
        contextSize: config.contextSize,
        threads: config.threads,
        gpu: config.gpu,
        logger: api.logger,
      },
      importBackend,
    );

    // Checked per request, not at load: the file may appear (or vanish) while claw runs,
    // and a missing model must not keep the plugin from loading and listing itself.
    const missingModel = (): string | undefined => {
      if (!modelPath) return `${PROVIDER_ID}: no model configured; set ${MODEL_PATH_KEY} to a .gguf file`;
      if (!existsSync(modelPath) || !statSync(modelPath).isFile())
        return `${PROVIDER_ID}: model file not found: ${modelPath} (from ${MODEL_PATH_KEY})`;
      return undefined;
    };
    const requireModelFile = (): string => {
      const missing = missingModel();
      if (missing) throw new ModelError('invalid_request', missing, { provider: PROVIDER_ID });
      return modelPath!;
    };
    const requireCandidate = (path: string): string => {
      const file = resolveModelPath(path, api.kernel.paths.stateDir);
      if (!file || !existsSync(file) || !statSync(file).isFile())
        throw new ModelError('invalid_request', `${PROVIDER_ID}: model file not found: ${file ?? path}`, {
          provider: PROVIDER_ID,
        });
      return file;
    };

    const provider: ModelProvider & { readonly backendRequested: boolean } = {
      id: PROVIDER_ID,
      label: 'llama.cpp (local)',
      requiresKey: false,
      unavailable: missingModel,
      get backendRequested() {
        return runtime.backendRequested;
      },
      models(): ModelInfo[] {
        return [
          {
            id: modelIdFor(modelPath),
            name: modelPath ? basename(modelPath) : 'local GGUF model (not configured)',
            contextWindow: config.contextSize,
            maxTokens: config.maxTokens,
            // Runs on this machine: no per-token bill.
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          },
        ];
      },
      // There is one configured model, so `request.model` does not pick a file: any id the
      // loop routes here ("local", the file's base name, an alias) means that model.
      async *stream(request, { signal }) {
        const candidate = request.endpoint?.modelPath;
        const file = candidate === undefined ? requireModelFile() : requireCandidate(candidate);
        const maxTokens =
          request.maxTokens !== undefined && request.maxTokens > 0 ? Math.floor(request.maxTokens) : config.maxTokens;
        yield* runtime.generate({ modelPath: file, request, maxTokens, signal, once: file !== modelPath });
      },
    };
    api.registerProvider(provider);

    api.registerService({
      id: PROVIDER_ID,
      start() {
        // Nothing to start: the model loads on the first request.
      },
      async stop() {
        await runtime.dispose();
      },
    });
  },
});
