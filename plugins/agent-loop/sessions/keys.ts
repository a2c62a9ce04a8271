/** Session keys are the kernel's (channels derive them too); re-exported for the loop's modules. */
export * from '../../../kernel/sessions/keys.js';
