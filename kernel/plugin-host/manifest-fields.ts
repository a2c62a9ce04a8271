/** Manifest vocabulary shared by the schema (build time) and the manifest reader (run time). */

/** Values of `kind`: the exclusive slots a plugin can fill. */
export const SLOT_KINDS = ['memory', 'agentLoop', 'sandbox'] as const;

/**
 * OpenClaw manifest fields claw accepts but does not act on, so OpenClaw plugins still
 * load; any other unknown key is reported as a warning.
 */
export const FOREIGN_MANIFEST_FIELDS = [
  'enabledByDefaultOnPlatforms',
  'legacyPluginIds',
  'autoEnableWhenConfiguredProviders',
  'providerCatalogEntry',
  'capabilityCatalogEntry',
  'modelSupport',
  'modelCatalog',
  'modelPricing',
  'modelIdNormalization',
  'providerEndpoints',
  'providerRequest',
  'secretProviderIntegrations',
  'cliBackends',
  'syntheticAuthRefs',
  'nonSecretAuthMarkers',
  'commandAliases',
  'providerUsageAuthEnvVars',
  'providerAuthAliases',
  'providerAuthChoices',
  'backupResources',
  'setup',
  'doctorContract',
  'doctorHealthChecks',
  'sessionRouteStateOwners',
  'qaRunners',
  'dashboard',
  'mcpServers',
  'themes',
  'contracts',
  'transcriptSources',
  'configContracts',
  'mediaUnderstandingProviderMetadata',
  'imageGenerationProviderMetadata',
  'videoGenerationProviderMetadata',
  'musicGenerationProviderMetadata',
  'toolMetadata',
  'channelConfigs',
  'channelAccountKeyPolicies',
  'catalog',
  'categories',
  'configGroups',
] as const;

