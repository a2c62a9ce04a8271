/** Session keys (temporarily re-exported from the kernel until the channel move lands). */
export * from '../../kernel/sessions/keys.js';
