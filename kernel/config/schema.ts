// Kept only for config/store.ts (being edited elsewhere); the types are generated from schemas/.
export type * from '../generated/types.js';
