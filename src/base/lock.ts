/** A FIFO mutex: PUTs of members and reloads run one at a time (`Control.lock` in ADR-0049). */
export class Lock {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` after every earlier holder finished; errors propagate to the caller only. */
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(() => {}, () => {});
    return result;
  }
}
