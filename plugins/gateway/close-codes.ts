/** WebSocket close codes the gateway uses. */
export const CloseCodes = {
  normal: 1000,
  goingAway: 1001,
  unsupportedData: 1003,
  policy: 1008,
  tooBig: 1009,
  restart: 1012,
  tryAgainLater: 1013,
} as const;
