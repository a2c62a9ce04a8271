#!/usr/bin/env bash
# Builds claw's default Docker sandbox image (claw-sandbox:busybox) with no image registry:
# this machine's busybox-static as the root filesystem, imported into the daemon at
# DOCKER_HOST. The same code as `claw sandbox build` (plugins/sandbox-docker/image.ts).
#
#   scripts/build-sandbox-image.sh [image:tag]
#
# Needs: a running Docker daemon, busybox-static (apt-get install busybox-static), and
# dockerode, which is installed on demand into $OPENCLAW_STATE_DIR/runtime-deps (default
# ~/.openclaw/runtime-deps) like every heavy optional dependency of claw.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/plugins/sandbox-docker/image.js ] || npm run build >/dev/null
exec node --input-type=module - "$@" <<'JS'
import { DockerSandboxBackend } from './dist/plugins/sandbox-docker/backend.js';
import { runtimeDepsService } from './dist/host/runtime-deps.js';
import { resolveStateDir } from './dist/kernel/index.js';

const stateDir = resolveStateDir(process.env);
const backend = new DockerSandboxBackend({ stateDir, env: process.env, deps: runtimeDepsService({ stateDir }) });
const image = process.argv[2] ?? backend.defaultImage;
try {
  const started = performance.now();
  await backend.buildImage({ image });
  console.log(`built ${image} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`build-sandbox-image: ${error.message}`);
  process.exit(1);
}
JS
