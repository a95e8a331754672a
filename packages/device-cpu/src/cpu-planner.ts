/**
 * The CPU device's plan compiler: turns a recorded command buffer into its CpuPlan on the first
 * submission (hal `CommandBuffer.devicePlan`, cached on the command buffer under `key`), checking that
 * every executable and direct buffer the commands name belongs to the device. In task mode a reusable
 * plan that the garbage collector reclaims with its command buffer leaves the workers that have it.
 *
 * It lives beside the plan and the run loop, not in the device, so that a submission goes down the
 * layers (queue front → device surface → plan → run loop → task queue → worker) without calling back
 * into cpu-device.ts.
 */
import type { CommandBuffer, Executable } from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { newMemory } from './byte-ops';
import { CpuBuffer } from './cpu-buffer';
import { CpuExecutable } from './cpu-executable';
import type { CpuPlan } from './cpu-plan';
import type { CpuRunLoop } from './cpu-run-loop';
import { buildPlan } from './plan-builder';

export class CpuPlanner {
  /** The key of this device's plans on a command buffer (`devicePlan(key, build)`). */
  readonly key = {};
  #nextId = 0;
  readonly #registry: FinalizationRegistry<CpuPlan> | undefined;

  readonly #device: object;
  readonly #what: string;
  readonly #loop: CpuRunLoop;
  readonly #shared: boolean;

  constructor(
    /** The device: executables and direct buffers must be its own. */
    device: object,
    /** How messages name the submission ("device 'cpu' queueExecute"). */
    what: string,
    loop: CpuRunLoop,
    /** Task mode: plan memory is shared with the workers, and collected plans are freed there. */
    shared: boolean,
  ) {
    this.#device = device;
    this.#what = what;
    this.#loop = loop;
    this.#shared = shared;
    this.#registry = shared ? new FinalizationRegistry((plan: CpuPlan) => this.#free(plan)) : undefined;
  }

  /** Builds the plan of `commandBuffer` (CommandBuffer.devicePlan's builder). */
  readonly build = (commandBuffer: CommandBuffer): CpuPlan => {
    const built = buildPlan(commandBuffer, this.#executableId, (n) => newMemory(n, this.#shared));
    for (const buffer of built.direct) {
      if (!(buffer instanceof CpuBuffer) || buffer.device !== this.#device) {
        throw invalid(`${this.#what}: a command references a buffer of another device`);
      }
    }
    const plan: CpuPlan = {
      id: this.#nextId++,
      arrays: built.arrays,
      direct: built.direct as CpuBuffer[],
      slots: built.slots,
      oneShot: commandBuffer.mode === 'one-shot',
      shippedTo: 0,
      runtime: undefined,
    };
    if (!plan.oneShot) this.#registry?.register(commandBuffer, plan);
    return plan;
  };

  readonly #executableId = (executable: Executable): number => {
    if (!(executable instanceof CpuExecutable) || executable.device !== this.#device) {
      throw invalid(`${this.#what}: a dispatch names an executable of another device`);
    }
    return executable.id;
  };

  /** A reusable command buffer was collected: its plan leaves the workers. */
  #free(plan: CpuPlan): void {
    if (this.#loop.gone) return;
    for (const queue of this.#loop.tasks) {
      if (plan.shippedTo & (1 << queue.index)) queue.send({ t: 'plan-free', id: plan.id });
    }
  }
}
