/**
 * @kdelta/errors: `KdeltaError`, the base of every error kdelta's packages throw. A leaf: it
 * imports nothing, so every package can import it.
 */
export { composeMessage, isKdeltaError, KdeltaError, locationParts, type KdeltaErrorInit } from './kdelta-error.js';
