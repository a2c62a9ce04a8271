/**
 * `hello-ok.features`: every method and event the gateway can serve, including those of
 * enabled plugins that have not loaded yet (their manifests declare them), and the
 * additive wire contracts (`capabilities`) OpenClaw's clients check before they send the
 * newer request fields. A contract is advertised only while the method that honours it is
 * there, so a client never sends fields nobody reads.
 */
import type { KernelServices } from '../../sdk/index.js';

/** OpenClaw capability name → the method whose params implement that contract in claw. */
const CAPABILITY_METHODS: ReadonlyArray<readonly [string, string]> = [
  // models.list accepts {view, preparedOnly, refresh} and answers from the catalogue.
  ['published-model-catalog', 'models.list'],
];

export interface HelloFeatures {
  methods: string[];
  events: string[];
  capabilities: string[];
}

export function helloFeatures(kernel: KernelServices): HelloFeatures {
  // connect is answered by the handshake rather than the registry, yet OpenClaw's clients list it.
  const methods = [...new Set([...kernel.protocol.methodNames(), 'connect'])].sort();
  const events = new Set(kernel.protocol.eventNames());
  for (const record of kernel.plugins()) {
    if (!record.enabled || record.status === 'failed') continue;
    for (const event of record.manifest?.gatewayEvents ?? []) events.add(event);
  }
  const available = new Set(methods);
  const capabilities = CAPABILITY_METHODS.filter(([, method]) => available.has(method)).map(
    ([capability]) => capability,
  );
  return { methods, events: [...events].sort(), capabilities };
}
