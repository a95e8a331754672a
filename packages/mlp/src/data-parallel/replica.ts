/**
 * One device of a data-parallel run: its parameter replica (one packed tensor, resident through
 * @keel/tensor-residency and leased read-write for the whole run: uploaded once before the first step,
 * read back once after the last), its executable and its gradient-step recordings (one per shard size,
 * recorded on first use and replayed with a binding table), its input and gradient buffers, the host
 * memory its gradients land in, and its timelines.
 *
 * Timelines (semaphores of this device), value after step k:
 * | `upload` | 2k+1: x of shard k written; 2k+2: its labels |
 * | `alloc`  | k+1: the arena of step k allocated |
 * | `exec`   | k+1: step k's gradients computed |
 * | `read`   | k+1: step k's gradients (and loss) on the host (not used when pinned: `exec` says it) |
 * | `bcast`  | k+1: the weights after step k written into the replica |
 * | `dealloc`| k+1: the arena of step k released |
 */
import type { Semaphore } from '@keel/fence';
import {
  type Binding,
  type BindingTable,
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  type Device,
  type Executable,
  MemoryType,
} from '@keel/hal';
import { isHostMappable, ResidencyManager, Tensor, type TensorLease } from '@keel/tensor-residency';
import type { MlpConfig } from '../model';
import { COMPUTE_QUEUE, UPLOAD_QUEUE } from '../train/step-pipeline';
import { GRADIENT_SLOTS, type GradientStep, gradientStep, type PackedParameters } from './gradient-program';

/** A recorded gradient step for one shard size. */
export interface RecordedShardStep {
  readonly step: GradientStep;
  readonly commandBuffer: CommandBuffer;
  readonly commandBuffers: readonly CommandBuffer[];
  readonly dispatches: number;
}

export class Replica {
  readonly index: number;
  readonly label: string;
  readonly device: Device;
  readonly manager: ResidencyManager;
  readonly tensor: Tensor<'f32'>;
  readonly lease: TensorLease<'f32'>;
  readonly x: Buffer;
  readonly labels: Buffer;
  readonly grads: Buffer;
  /**
   * Host memory holding the gradients (and the shard loss) once a step's `read` completed, reused every
   * step; on a device with host mapping (the CPU device) it IS the gradient buffer, pinned (viewed in
   * place through `mapHostView`): no read and no copy.
   */
  readonly gradsHost: Float32Array;
  /** True when `gradsHost` views the device's gradient buffer in place (no read needed). */
  readonly pinned: boolean;
  readonly upload: Semaphore;
  readonly alloc: Semaphore;
  readonly exec: Semaphore;
  readonly read: Semaphore;
  readonly bcast: Semaphore;
  readonly dealloc: Semaphore;
  /** The binding table every step of this device binds (entries replaced per step; snapshotted at submission). */
  readonly table: (Binding | undefined)[];
  readonly tables: readonly BindingTable[];
  readonly #executable: Executable;
  readonly #config: MlpConfig;
  readonly #packed: PackedParameters;
  readonly #alignment: number;
  readonly #recordings = new Map<number, RecordedShardStep>();
  /** Recordings made (one per distinct shard size). */
  recordings = 0;

  constructor(
    index: number,
    label: string,
    device: Device,
    executable: Executable,
    config: MlpConfig,
    packed: PackedParameters,
    initial: Float32Array<ArrayBuffer>,
  ) {
    this.index = index;
    this.label = label;
    this.device = device;
    this.#executable = executable;
    this.#config = config;
    this.#packed = packed;
    this.#alignment = device.info.limits.minStorageBufferOffsetAlignment;
    this.manager = new ResidencyManager(device, {
      affinity: UPLOAD_QUEUE,
      allocation: 'buffers',
      label: `${label} parameters`,
    });
    this.tensor = Tensor.fromHost('f32', [initial.length], initial, { copy: true, label: `params@${label}` });
    this.lease = this.manager.acquire(this.tensor, 'readwrite');
    const buffer = (byteLength: number, name: string): Buffer =>
      device.createBuffer({ byteLength, usage: BufferUsage.DEFAULT, label: `${name}@${label}` });
    const rows = config.batch;
    this.x = buffer(4 * rows * config.layers[0]!, 'x');
    this.labels = buffer(4 * rows, 'labels');
    if (isHostMappable(device)) {
      this.grads = device.createBuffer({
        byteLength: packed.gradsBytes,
        usage: BufferUsage.DEFAULT | BufferUsage.MAPPING,
        memoryType: MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT,
        label: `grads@${label}`,
      });
      const view = device.mapHostView(this.grads);
      this.gradsHost = new Float32Array(view.buffer, view.byteOffset, packed.gradsBytes / 4);
      this.pinned = true;
    } else {
      this.grads = buffer(packed.gradsBytes, 'grads');
      this.gradsHost = new Float32Array(packed.gradsBytes / 4);
      this.pinned = false;
    }
    this.upload = device.createSemaphore(0);
    this.alloc = device.createSemaphore(0);
    this.exec = device.createSemaphore(0);
    this.read = device.createSemaphore(0);
    this.bcast = device.createSemaphore(0);
    this.dealloc = device.createSemaphore(0);
    this.table = new Array<Binding | undefined>(GRADIENT_SLOTS).fill(undefined);
    this.tables = [this.table];
  }

  /** The gradient step for a shard of `rows` rows (recorded on first use). */
  stepFor(rows: number): RecordedShardStep {
    let recorded = this.#recordings.get(rows);
    if (recorded === undefined) {
      const step = gradientStep(this.#config, rows, this.#packed, this.#alignment);
      const commandBuffer = this.device.createCommandBuffer({
        mode: 'reusable',
        bindingCapacity: GRADIENT_SLOTS,
        affinity: COMPUTE_QUEUE,
        label: `mlp gradient step (${rows} rows)`,
      });
      let dispatches = 0;
      commandBuffer.begin();
      step.program.stages.forEach((stage, s) => {
        if (s > 0) commandBuffer.barrier();
        for (const dispatch of stage) {
          commandBuffer.dispatch(this.#executable, dispatch.kernel, {
            workload: dispatch.workload,
            constants: dispatch.constants,
            bindings: dispatch.bindings.map((name) => step.ref(name)),
          });
          dispatches++;
        }
      });
      commandBuffer.end();
      recorded = { step, commandBuffer, commandBuffers: [commandBuffer], dispatches };
      this.#recordings.set(rows, recorded);
      this.recordings++;
    }
    return recorded;
  }

  /** Destroys the buffers this replica made (work still using them keeps them alive until done). */
  destroyBuffers(): void {
    for (const b of [this.x, this.labels, this.grads]) if (b.state === 'live') b.destroy();
  }
}
