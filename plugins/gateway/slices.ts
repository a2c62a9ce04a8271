/**
 * Work that arrives in bursts (a thousand handshakes in one poll of the sockets) is run
 * in slices of a few milliseconds, yielding to the event loop between them, so one burst
 * cannot freeze every other connection, timer and request.
 */
export class SlicedQueue {
  private readonly jobs: Array<() => void> = [];
  private scheduled = false;

  constructor(
    private readonly sliceMs = 5,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  run(job: () => void): void {
    this.jobs.push(job);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    const until = performance.now() + this.sliceMs;
    let index = 0;
    while (index < this.jobs.length && performance.now() < until) {
      try {
        this.jobs[index++]!();
      } catch (error) {
        this.onError(error);
      }
    }
    this.jobs.splice(0, index);
    if (this.jobs.length > 0) setImmediate(() => this.drain());
    else this.scheduled = false;
  }
}
