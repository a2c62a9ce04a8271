/**
 * The two heavy libraries, loaded on first use through the host's runtime-deps service
 * (installed into <stateDir>/runtime-deps when claw's own install lacks them): unpdf for PDF
 * text (pdf.js's serverless build, no dependencies, ≈ 2 MB) and sharp for resizing images.
 */
import { runtimeDependencyLoader, type RuntimeDependency, type RuntimeDeps } from '../../sdk/index.js';

const RETRY = 'claw plugins enable media-understanding';

/** 1.6.x: 1.8 declares Node ≥ 22, and claw runs on Node 20. */
export const UNPDF: RuntimeDependency = { name: 'unpdf', version: '~1.6.2', approxSizeMb: 3 };
export const SHARP: RuntimeDependency = { name: 'sharp', version: '^0.35.6', approxSizeMb: 20 };

export type Unpdf = typeof import('unpdf');
export type Sharp = (typeof import('sharp'))['default'];

export const loadUnpdf = runtimeDependencyLoader<Unpdf>(UNPDF, 'extractText', RETRY);
/** sharp is a function with properties, so no named export tells the namespace from the function itself. */
let sharpLoading: Promise<Sharp> | undefined;
export function loadSharp(deps: RuntimeDeps): Promise<Sharp> {
  return (sharpLoading ??= deps.import<Sharp | { default: Sharp }>(SHARP, { retryCommand: RETRY }).then(
    (mod) => (typeof mod === 'function' ? mod : mod.default),
    (error: unknown) => {
      sharpLoading = undefined;
      throw error;
    },
  ));
}
