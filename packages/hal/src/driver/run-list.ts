/**
 * The run list of an inline device (driver kit): operations whose waits were reached are pushed and run
 * in order by one trampoline, so a chain of operations completed inside one `signal` (each completion
 * making the next one ready) runs iteratively instead of recursing once per operation. `run` is called
 * once per pushed item, never re-entrantly; what it throws is the caller's to handle inside `run`.
 * Allocation-free once warm (the backing array is reused).
 */
export class RunList<T> {
  readonly #items: (T | undefined)[] = [];
  #head = 0;
  #draining = false;

  constructor(private readonly run: (item: T) => void) {}

  /** Queues `item` and runs the list unless it is already running further up the stack. */
  push(item: T): void {
    this.#items.push(item);
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#head < this.#items.length) {
        const next = this.#items[this.#head] as T;
        this.#items[this.#head++] = undefined;
        this.run(next);
      }
    } finally {
      this.#items.length = 0;
      this.#head = 0;
      this.#draining = false;
    }
  }
}
