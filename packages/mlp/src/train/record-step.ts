/**
 * Records the training step once: the StepProgram's stages as dispatches of the MLP executable with a
 * barrier between stages, every buffer an indirect slot reference (see step-layout.ts). The result is
 * a reusable command buffer that each step replays with its own binding table.
 */
import type { CommandBuffer, Device, Executable, QueueAffinity } from '@keel/hal';
import type { StepProgram } from '../step-program';
import type { StepLayout } from './step-layout';

/** The recorded step and what it holds. */
export interface RecordedStep {
  readonly commandBuffer: CommandBuffer;
  /** Dispatches recorded. */
  readonly dispatches: number;
  /** Barriers recorded (one between consecutive stages). */
  readonly barriers: number;
}

/** Records `program` into a new reusable command buffer of `device`, submittable on `affinity`. */
export function recordStep(
  device: Device,
  executable: Executable,
  program: StepProgram,
  layout: StepLayout,
  affinity: QueueAffinity,
): RecordedStep {
  const commandBuffer = device.createCommandBuffer({
    mode: 'reusable',
    bindingCapacity: layout.slotCount,
    affinity,
    label: 'mlp training step',
  });
  let dispatches = 0;
  let barriers = 0;
  commandBuffer.begin();
  for (let s = 0; s < program.stages.length; s++) {
    if (s > 0) {
      commandBuffer.barrier();
      barriers++;
    }
    for (const dispatch of program.stages[s]!) {
      commandBuffer.dispatch(executable, dispatch.kernel, {
        workload: dispatch.workload,
        constants: dispatch.constants,
        bindings: dispatch.bindings.map((name) => layout.ref(name)),
      });
      dispatches++;
    }
  }
  commandBuffer.end();
  return { commandBuffer, dispatches, barriers };
}
