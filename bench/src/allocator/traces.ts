/**
 * Allocation traces for the allocator suite: the host-order alloc/free sequence of a realistic MLP
 * training schedule, and a randomized one. A trace is what a queue-ordered allocator sees on one queue
 * when execution follows issue order.
 */

export type TraceEvent =
  | { readonly op: 'alloc'; readonly id: number; readonly size: number }
  | { readonly op: 'free'; readonly id: number };

export interface Trace {
  readonly name: string;
  readonly events: readonly TraceEvent[];
  /** Highest sum of live sizes over the trace. */
  readonly peakLiveBytes: number;
}

class TraceBuilder {
  readonly events: TraceEvent[] = [];
  readonly #ids = new Map<string, { id: number; size: number }>();
  #next = 0;
  #live = 0;
  peak = 0;

  alloc(name: string, size: number): void {
    if (this.#ids.has(name)) throw new Error(`trace: ${name} allocated twice`);
    const id = this.#next++;
    this.#ids.set(name, { id, size });
    this.events.push({ op: 'alloc', id, size });
    this.#live += size;
    if (this.#live > this.peak) this.peak = this.#live;
  }

  free(...names: string[]): void {
    for (const name of names) {
      const entry = this.#ids.get(name);
      if (entry === undefined) throw new Error(`trace: ${name} freed but not live`);
      this.#ids.delete(name);
      this.events.push({ op: 'free', id: entry.id });
      this.#live -= entry.size;
    }
  }

  get liveNames(): string[] {
    return [...this.#ids.keys()];
  }

  build(name: string): Trace {
    if (this.#ids.size > 0) throw new Error(`trace: ${this.liveNames.join(', ')} never freed`);
    return { name, events: this.events, peakLiveBytes: this.peak };
  }
}

export interface MlpTraceOptions {
  readonly layers?: readonly number[];
  readonly batch?: number;
  readonly steps?: number;
}

/**
 * Training steps of an MLP (default: the reference 784-512-512-10 at batch 256, f32), with every
 * transient a step allocates, freed right after its last use:
 *
 * - inputs x (batch × 784) and one-hot labels y, uploaded on a second queue one step ahead (the next
 *   batch is allocated once the current forward pass is done);
 * - forward: pre-activations z_l and activations h_l = relu(z_l); the last layer's logits, softmax
 *   row max / row sum scratch, probabilities, per-row losses, the reduced loss and its 4-byte readback
 *   staging buffer;
 * - backward: dz (probabilities − labels), per layer dW (in × out), db (out), a column-sum scratch for
 *   db, dh = dz Wᵀ and dz_prev = dh ⊙ relu′(z) — weights are updated in place (SGD), so gradients die
 *   right after the update, and each activation dies after its weight gradient used it.
 *
 * Weights and biases are resident (not queue-allocated) and not part of the trace.
 */
export function mlpTrace({
  layers = [784, 512, 512, 10],
  batch = 256,
  steps = 4,
}: MlpTraceOptions = {}): Trace {
  const f32 = 4;
  const t = new TraceBuilder();
  const L = layers.length - 1;
  const width = (i: number): number => layers[i] as number;
  const upload = (step: number): void => {
    t.alloc(`x${step}`, batch * width(0) * f32);
    t.alloc(`y${step}`, batch * width(L) * f32);
  };
  upload(0);
  for (let s = 0; s < steps; s++) {
    const x = `x${s}`;
    const y = `y${s}`;
    // Forward.
    for (let l = 0; l < L; l++) {
      const out = width(l + 1);
      t.alloc(`z${l}`, batch * out * f32);
      if (l < L - 1) t.alloc(`h${l}`, batch * out * f32);
    }
    t.alloc('rowmax', batch * f32);
    t.alloc('rowsum', batch * f32);
    t.alloc('p', batch * width(L) * f32);
    t.free('rowmax', 'rowsum', `z${L - 1}`);
    t.alloc('lossRows', batch * f32);
    t.alloc('loss', f32);
    t.free('lossRows');
    t.alloc('lossReadback', f32);
    t.free('loss');
    // The next batch uploads on the second queue while this step runs backward.
    if (s + 1 < steps) upload(s + 1);
    // Backward.
    t.alloc('dz', batch * width(L) * f32);
    t.free('p', y);
    for (let l = L - 1; l >= 0; l--) {
      const inW = width(l);
      const outW = width(l + 1);
      const a = l === 0 ? x : `h${l - 1}`;
      t.alloc('dW', inW * outW * f32);
      t.alloc('colsum', 64 * outW * f32);
      t.alloc('db', outW * f32);
      t.free('colsum');
      if (l > 0) t.alloc('dh', batch * inW * f32);
      t.free('dW', 'db', a); // SGD update in place, then the gradient and the activation die
      t.free('dz');
      if (l > 0) {
        t.alloc('dz', batch * inW * f32);
        t.free('dh', `z${l - 1}`);
      }
    }
    t.free('lossReadback');
  }
  return t.build(`mlp ${layers.join('-')} batch ${batch} × ${steps} steps`);
}

/** mulberry32: a small deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RandomTraceOptions {
  readonly seed?: number;
  readonly allocations?: number;
  /** Live allocations the trace hovers around. */
  readonly targetLive?: number;
  readonly minSize?: number;
  readonly maxSize?: number;
}

/**
 * A randomized trace: sizes log-uniform between `minSize` and `maxSize` (multiples of 4), lifetimes
 * random (each step frees a random live allocation with a probability that grows with the live count).
 */
export function randomTrace({
  seed = 42,
  allocations = 20_000,
  targetLive = 48,
  minSize = 256,
  maxSize = 2 * 1024 * 1024,
}: RandomTraceOptions = {}): Trace {
  const random = prng(seed);
  const t = new TraceBuilder();
  const live: string[] = [];
  const logMin = Math.log(minSize);
  const logMax = Math.log(maxSize);
  let made = 0;
  while (made < allocations || live.length > 0) {
    const freeChance = made >= allocations ? 1 : live.length / (2 * targetLive);
    if (live.length > 0 && random() < freeChance) {
      const index = Math.floor(random() * live.length);
      const [name] = live.splice(index, 1);
      t.free(name as string);
    } else {
      const size = Math.max(4, Math.round(Math.exp(logMin + random() * (logMax - logMin)) / 4) * 4);
      const name = `r${made++}`;
      t.alloc(name, size);
      live.push(name);
    }
  }
  return t.build(`random seed ${seed}, ${allocations} allocations`);
}
