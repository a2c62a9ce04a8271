/** Session keys live in the SDK (the channels plugin derives them too); re-exported for the loop's modules. */
export * from '../../../sdk/sessions/keys.js';
