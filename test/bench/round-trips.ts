/**
 * The load shape every chat-channel bench uses: each user's first DM (warm-up), then
 * `sequential` DMs one at a time for the latency figures, then every user sending `perUser`
 * DMs, each as soon as the previous one was answered, for the throughput.
 */
export interface RoundTripFigures {
  messagesPerSecond: number;
  p50AddedMs: number;
  p95AddedMs: number;
  messages: number;
}

export async function measureRoundTrips(
  options: { users: number; perUser: number; sequential: number },
  /** One DM from user `user` (its `n`th); resolves with the ms from sending it to the reply. */
  roundTrip: (user: number, n: number) => Promise<number>,
): Promise<RoundTripFigures> {
  const { users, perUser, sequential } = options;
  const everyone = Array.from({ length: users }, (_, user) => user);
  await Promise.all(everyone.map((user) => roundTrip(user, 0)));
  const latencies: number[] = [];
  for (let i = 0; i < sequential; i++) latencies.push(await roundTrip(i % users, 1000 + i));
  latencies.sort((a, b) => a - b);

  const started = performance.now();
  await Promise.all(
    everyone.map(async (user) => {
      for (let n = 1; n <= perUser; n++) await roundTrip(user, n);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    messagesPerSecond: (users * perUser) / seconds,
    p50AddedMs: latencies[Math.floor(latencies.length / 2)]!,
    p95AddedMs: latencies[Math.floor(latencies.length * 0.95)]!,
    messages: users * perUser,
  };
}
