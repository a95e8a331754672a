/**
 * The run list of an inline device (driver kit): operations whose waits were reached are pushed and run
 * in order by one trampoline, so a chain of operations completed inside one `signal` (each completion
 * making the next one ready) runs iteratively instead of recursing once per operation. `run` is called
 * once per pushed item, never re-entrantly; what it throws is the caller's to handle inside `run`.
 * Allocation-free once warm (the backing array is reused).
 */
export class RunList<T> {
  // Plain fields, not #private: this is the hot path of every inline operation, and the baseline tiers
  // of V8 (where a submission runs until it is hot) load plain fields faster.
  private readonly items: (T | undefined)[] = [];
  private head = 0;
  private draining = false;

  declare private readonly run: (item: T) => void;

  constructor(run: (item: T) => void) {
    this.run = run;
  }

  /** Runs `item` now, or after the items queued before it when the list is already running further up the stack. */
  push(item: T): void {
    if (this.draining) {
      this.items.push(item);
      return;
    }
    this.draining = true;
    try {
      // The common case (nothing running): no queueing at all.
      this.run(item);
      const items = this.items;
      while (this.head < items.length) {
        const next = items[this.head] as T;
        items[this.head++] = undefined;
        this.run(next);
      }
    } finally {
      if (this.items.length !== 0) this.items.length = 0;
      this.head = 0;
      this.draining = false;
    }
  }
}
