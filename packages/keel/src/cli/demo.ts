/**
 * `keel demo [--device cpu|webgpu] [--steps N] [--batch B] [--checkpoint-every K] [--lose-device-at S]
 * [--trace FILE [--trace-steps N]]`:
 * trains the reference MLP with `trainMlp` (`@keel/mlp`) and shows a progress bar (plain lines when stdout
 * is not a terminal), then the summary: ms/step, final loss, bytes moved per direction, commands
 * recorded vs replayed, allocator peaks, device; with `--checkpoint-every` the mirror and recoveries.
 * `--lose-device-at S` destroys the device after step S (as a driver reset would) to show a recovery.
 * `--trace FILE` writes a device trace (Chrome trace event JSON: queue operations, waits, transfers and
 * per-dispatch times; Perfetto and chrome://tracing open it) of the last `--trace-steps` steps
 * (default 5) to FILE.
 * The path is checked before training (its folder exists and is writable, it is not a folder); when a
 * device is lost inside the traced steps the file holds each device's part, one pid per device.
 * `--devices LIST` trains data-parallel over several devices (`trainMlpDataParallel`) and prints where
 * the scheduler placed each operation of the last step; `--trace` and `--trace-steps` are for one
 * device and are refused there, as `--trace-steps` is without `--trace`. The list is checked against
 * `--batch` (a row per device) and the WebGPU adapters present before the first line is printed,
 * naming the flag.
 * A failure prints one line, `keel demo: [CODE: ]message` (the KeelError's code where there is one),
 * and exits 1.
 */
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { KeelError } from '@keel/fence';
import type { ChromeTrace, Device } from '@keel/hal';
import {
  checkBatchCoversDevices,
  checkDeviceAdapters,
  DEFAULT_STEPS,
  describeModel,
  formatDataParallelSummary,
  formatSummary,
  loseDevice,
  MAX_BATCH,
  MAX_STEPS,
  parseDeviceList,
  REFERENCE_MLP,
  type TrainDeviceKind,
  trainMlp,
  trainMlpDataParallel,
} from '@keel/mlp';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { createProgressReporter } from './progress-reporter';

/** A commander argument parser: an integer in [1, max], else a message naming the range. */
export function positiveInteger(max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > max) {
      throw new InvalidArgumentError(`expected an integer from 1 to ${max}.`);
    }
    return n;
  };
}

/**
 * The `--trace` parser: a file the demo can write once training is done, checked before it starts:
 * not a folder, in an existing writable folder, writable if it exists. Else a message naming why.
 */
export function writableFile(value: string): string {
  const file = path.resolve(value);
  const dir = path.dirname(file);
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat?.isDirectory()) throw new InvalidArgumentError('it is a folder; expected a file to write.');
  const dirStat = statSync(dir, { throwIfNoEntry: false });
  if (dirStat === undefined) throw new InvalidArgumentError(`folder '${dir}' does not exist.`);
  if (!dirStat.isDirectory()) throw new InvalidArgumentError(`'${dir}' is not a folder.`);
  try {
    accessSync(stat === undefined ? dir : file, constants.W_OK);
  } catch {
    throw new InvalidArgumentError(
      stat === undefined ? `folder '${dir}' is not writable.` : 'the file is not writable.',
    );
  }
  return value;
}

/**
 * The `--devices` parser: a device list (`cpu:2`, `cpu,webgpu`, `webgpu:0,webgpu:1`, `webgpu:0x2`),
 * validated by `parseDeviceList`; its KeelError (code and rule) becomes commander's message.
 */
export function deviceList(value: string): string {
  try {
    parseDeviceList(value, '--devices');
    return value;
  } catch (error) {
    if (KeelError.is(error)) throw new InvalidArgumentError(`${error.code}: ${error.message}`);
    throw error;
  }
}

interface DemoOptions {
  readonly device: TrainDeviceKind;
  readonly devices?: string;
  readonly steps?: number;
  readonly batch: number;
  readonly checkpointEvery?: number;
  readonly loseDeviceAt?: number;
  readonly trace?: string;
  readonly traceSteps: number;
}

/** Steps `keel demo --trace` records by default (the last ones of the run). */
export const DEFAULT_TRACE_STEPS = 5;

/**
 * Writes `trace` (Chrome trace event JSON) to `file` and returns the line the demo prints: the file,
 * the steps, the events and dispatch entries, and where dispatch times come from.
 */
export function writeTraceFile(
  file: string,
  trace: ChromeTrace,
  firstStep: number,
  lastStep: number,
): string {
  try {
    writeFileSync(file, `${JSON.stringify(trace)}\n`);
  } catch (error) {
    throw new Error(
      `--trace: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const dispatches = trace.traceEvents.filter((e) => e.cat === 'dispatch').length;
  const steps = firstStep === lastStep ? `step ${firstStep}` : `steps ${firstStep}-${lastStep}`;
  const devices = trace.otherData.devices;
  const across =
    typeof devices === 'number' && devices > 1
      ? `; ${devices} devices, one pid each (a device was lost and replaced during these steps; the redone steps appear on both)`
      : '';
  return `trace of ${steps} written to ${file}: ${trace.traceEvents.length} events, ${dispatches} dispatch entries (${String(trace.otherData.dispatchTiming)})${across}; open it in https://ui.perfetto.dev or chrome://tracing`;
}

/** "1 step", "8 steps". */
const stepCount = (n: number): string => `${n} step${n === 1 ? '' : 's'}`;

/** `keel demo --devices LIST`: data-parallel training over the listed devices. */
async function runDataParallelDemo(options: DemoOptions, spec: string): Promise<void> {
  const out = process.stdout;
  const entries = parseDeviceList(spec, '--devices');
  // What the API would refuse after opening devices, refused before the first line, naming the flags.
  checkBatchCoversDevices(options.batch, entries.length, '--batch');
  await checkDeviceAdapters(entries, '--devices');
  const steps = options.steps ?? (entries.some((e) => e.kind === 'webgpu') ? DEFAULT_STEPS.webgpu : 200);
  const model = describeModel({ config: { ...REFERENCE_MLP, batch: options.batch } });
  out.write(
    `keel demo: training the reference MLP (${model}) for ${stepCount(steps)}, data-parallel on ${spec} (global batch ${options.batch})\n`,
  );
  const reporter = createProgressReporter({ steps, stream: out });
  try {
    const result = await trainMlpDataParallel({
      devices: spec,
      steps,
      batch: options.batch,
      onStart: (info) => {
        if (!out.isTTY)
          out.write(`devices ready: ${info.devices.map((d) => `${d.label} (${d.name})`).join(', ')}\n`);
      },
      onStep: (p) => reporter.update(p),
    });
    reporter.stop();
    out.write(`\ntrained ${stepCount(result.steps)}\n${formatDataParallelSummary(result)}\n`);
  } catch (error) {
    reporter.stop();
    throw error;
  }
}

async function runDemo(options: DemoOptions): Promise<void> {
  const out = process.stdout;
  const steps = options.steps ?? DEFAULT_STEPS[options.device];
  const model = describeModel({ config: { ...REFERENCE_MLP, batch: options.batch } });
  out.write(
    `keel demo: training the reference MLP (${model}) for ${stepCount(steps)} on ${options.device}\n`,
  );
  if (options.loseDeviceAt !== undefined && options.checkpointEvery === undefined) {
    throw new Error(
      '--lose-device-at needs --checkpoint-every (without a mirror a lost device ends the run)',
    );
  }
  let reporter = createProgressReporter({ steps, stream: out });
  let device: Device | undefined;
  let lost = false;
  try {
    const result = await trainMlp({
      device: options.device,
      steps,
      batch: options.batch,
      checkpointEvery: options.checkpointEvery,
      ...(options.trace === undefined ? {} : { traceSteps: options.traceSteps }),
      onStart: (info) => {
        device = info.device;
        if (!out.isTTY) out.write(`device ready: ${info.deviceName}\n`);
      },
      onStep: (p) => {
        reporter.update(p);
        if (!lost && p.step === options.loseDeviceAt && device !== undefined) {
          lost = true;
          loseDevice(device);
        }
      },
      onRecovery: (e) => {
        reporter.stop();
        out.write(
          `\ndevice lost after step ${e.lostAfterStep} (${e.reason}); new device ${e.deviceName}: resuming at step ${e.resumeAtStep} ${
            e.fromMirror ? 'from the last mirror' : 'from the initial parameters (no mirror yet)'
          }, ${stepCount(e.stepsRedone)} redone\n`,
        );
        reporter = createProgressReporter({ steps, stream: out });
      },
    });
    reporter.stop();
    out.write(`\ntrained ${stepCount(result.steps)}\n${formatSummary(result)}\n`);
    if (options.trace !== undefined) {
      if (result.trace === undefined) throw new Error(`the ${result.backend} device recorded no trace`);
      const first = Math.max(1, steps - options.traceSteps + 1);
      out.write(`${writeTraceFile(options.trace, result.trace, first, steps)}\n`);
    }
  } catch (error) {
    reporter.stop();
    throw error;
  }
}

export function demoCommand(parent: Command): Command {
  return parent
    .command('demo')
    .description('train the reference MLP (784-512-512-10) on a Keel device and show what each package did')
    .addOption(new Option('--device <kind>', 'device to train on').choices(['cpu', 'webgpu']).default('cpu'))
    .option(
      '--devices <list>',
      'train data-parallel over several devices: cpu:N (N CPU devices), webgpu:I (adapter I, see keel info), webgpu:IxN (N devices on adapter I), comma-separated, e.g. cpu:2 or cpu,webgpu',
      deviceList,
    )
    .option(
      '--steps <n>',
      `training steps (1 to ${MAX_STEPS}; default: ${DEFAULT_STEPS.cpu} on cpu, ${DEFAULT_STEPS.webgpu} on webgpu)`,
      positiveInteger(MAX_STEPS),
    )
    .option(
      '--batch <b>',
      `samples per step (1 to ${MAX_BATCH})`,
      positiveInteger(MAX_BATCH),
      REFERENCE_MLP.batch,
    )
    .option(
      '--checkpoint-every <k>',
      `mirror the parameters to host memory every k steps (1 to ${MAX_STEPS}) and survive a lost device: open a new one, restore the last mirror, go on`,
      positiveInteger(MAX_STEPS),
    )
    .option(
      '--lose-device-at <step>',
      'destroy the device after this step, as a driver reset or tab eviction would (needs --checkpoint-every)',
      positiveInteger(MAX_STEPS),
    )
    .option(
      '--trace <file>',
      'write a device trace of the last training steps to <file> (Chrome trace event JSON: queue operations, waits, transfers, per-dispatch GPU/worker times; open it in ui.perfetto.dev or chrome://tracing)',
      writableFile,
    )
    .option(
      '--trace-steps <n>',
      `steps the trace records, the last ones of the run (1 to ${MAX_STEPS})`,
      positiveInteger(MAX_STEPS),
      DEFAULT_TRACE_STEPS,
    )
    .action(async (options: DemoOptions, command: Command) => {
      try {
        const traceSteps = command.getOptionValueSource('traceSteps') === 'cli';
        if (options.devices !== undefined && (options.trace !== undefined || traceSteps)) {
          throw new Error('--trace and --trace-steps are for one device; leave them out with --devices');
        }
        if (options.trace === undefined && traceSteps) {
          throw new Error('--trace-steps needs --trace (the file the trace of the last steps is written to)');
        }
        if (options.devices !== undefined) {
          if (command.getOptionValueSource('device') === 'cli') {
            throw new Error(
              '--device and --devices exclude each other (--devices cpu trains on one CPU device)',
            );
          }
          if (options.checkpointEvery !== undefined || options.loseDeviceAt !== undefined) {
            throw new Error(
              '--checkpoint-every and --lose-device-at are for one device; leave them out with --devices',
            );
          }
          await runDataParallelDemo(options, options.devices);
        } else {
          await runDemo(options);
        }
      } catch (error) {
        const code = KeelError.is(error) ? `${error.code}: ` : '';
        process.stderr.write(`keel demo: ${code}${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      }
      // Dawn can keep the event loop alive after its device is destroyed; everything is printed, so exit.
      process.exit(0);
    });
}
