/**
 * `slotsUsedBy(commandBuffer)` (driver kit): the binding-table slots a command buffer's commands name,
 * ascending, each once, for a device that executes by replaying the command buffer (no plan of its own)
 * and still snapshots only what the execution reads (`snapshotBindingTable(table, slots)`). Found once
 * per command buffer by a structural replay (O(commands)), then cached on it (`devicePlan`): a
 * submission costs O(slots used), never the highest slot number.
 */
import type { Buffer } from '../buffer';
import type { CommandBuffer } from '../command-buffer';
import type { StructureRef } from '../command-sink';
import { type DispatchArgs, PlanSink } from './plan-sink';

/** A plan sink that only collects refs (their slots); fills, updates and copies push theirs in PlanSink. */
class SlotCollector extends PlanSink<Buffer> {
  protected onFill(): void {}
  protected onUpdate(): void {}
  protected onCopy(): void {}
  protected onDispatch(d: DispatchArgs): void {
    const bindings = d.bindings;
    for (let i = 0; i < bindings.count; i++) this.#note(bindings.buffers[i]!);
    if (d.params !== undefined) this.#note(d.params);
  }

  #note(ref: StructureRef): void {
    if (typeof ref === 'number') this.refs.slots.add(ref);
  }
}

const KEY = {};

function collect(commandBuffer: CommandBuffer): Int32Array {
  const sink = new SlotCollector((buffer) => buffer);
  commandBuffer.replayStructure(sink);
  return sink.refs.usedSlots();
}

/** The slots `commandBuffer`'s commands name, ascending (cached on the command buffer). */
export function slotsUsedBy(commandBuffer: CommandBuffer): Int32Array {
  return commandBuffer.devicePlan(KEY, collect);
}
