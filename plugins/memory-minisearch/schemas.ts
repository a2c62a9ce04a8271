/**
 * This plugin reads its settings through the SDK's memory kit, so it declares the kit's keys
 * (`npm run gen` writes them into the manifest's `configContributions`).
 */
export { memoryConfigContributions as configContributions } from '../../sdk/memory/schemas.js';
