/**
 * The factory devices call from `Device.createCommandBuffer`: every device that has no native
 * recording of its own records into a DeferredCommandBuffer and replays it (or a plan built from it) at
 * submission.
 */
import type { CommandBuffer, CommandBufferOptions, Device } from '@keel/hal';
import { DeferredCommandBuffer } from './deferred-command-buffer';

/**
 * A new command buffer of `device` in state 'initial'. Throws INVALID_ARGUMENT for bad options (see
 * DeferredCommandBuffer's constructor). The device's `info.limits` are read once, here.
 */
export function createCommandBuffer(device: Device, options?: CommandBufferOptions): CommandBuffer {
  return new DeferredCommandBuffer(device, options);
}
