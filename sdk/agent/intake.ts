/**
 * What every way into the agent service (gateway methods, channels, `/v1`, webhooks) may be
 * refused with while the gateway stops. The intake journal itself (where accepted messages
 * wait, and their resume at the next start) is the agent plugin's.
 */

/** Raised instead of accepting a message while the gateway is shutting down or restarting. */
export class IntakeClosedError extends Error {
  constructor(reason = 'the gateway is shutting down') {
    super(`${reason}: the message was not accepted; send it again once the gateway is back`);
    this.name = 'IntakeClosedError';
  }
}
