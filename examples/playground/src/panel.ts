/**
 * One device's panel of the playground: its state (idle, running, done, stopped, error, unavailable),
 * the device info (backend, adapter or mode, queues, workers), the step and loss, ms/step and the bytes
 * moved per direction. Every figure is also written to a `data-*` attribute of the panel, which the
 * end-to-end test reads (examples/test/playground.test.ts).
 */
import { CpuDevice } from '@keel/device-cpu';
import type { Device } from '@keel/hal';
import { formatBytes, type TrainMlpResult } from '@keel/mlp';

export type PanelState = 'idle' | 'running' | 'done' | 'stopped' | 'error' | 'unavailable';

const FIELDS = [
  ['device', 'device'],
  ['backend', 'backend'],
  ['queues', 'queues'],
  ['workers', 'workers'],
  ['step', 'step'],
  ['loss', 'loss (first → last)'],
  ['ms', 'ms/step'],
  ['h2d', 'host → device'],
  ['d2h', 'device → host'],
] as const;
type Field = (typeof FIELDS)[number][0];

export class DevicePanel {
  readonly #root: HTMLElement;
  readonly #status: HTMLElement;
  readonly #reason: HTMLElement;
  readonly #values = new Map<Field, HTMLElement>();
  #firstLoss = Number.NaN;
  #recentMs: number[] = [];

  constructor(root: HTMLElement, title: string) {
    this.#root = root;
    const h2 = document.createElement('h2');
    h2.textContent = title;
    this.#status = document.createElement('div');
    this.#status.className = 'status';
    const dl = document.createElement('dl');
    for (const [key, label] of FIELDS) {
      const dt = document.createElement('dt');
      dt.textContent = label;
      const dd = document.createElement('dd');
      dd.textContent = '—';
      dd.dataset.field = key;
      dl.append(dt, dd);
      this.#values.set(key, dd);
    }
    this.#reason = document.createElement('p');
    this.#reason.className = 'reason';
    this.#reason.hidden = true;
    root.replaceChildren(h2, this.#status, this.#reason, dl);
    this.setState('idle', 'ready');
  }

  setState(state: PanelState, text: string, reason?: string): void {
    this.#root.dataset.state = state;
    this.#status.textContent = text;
    this.#reason.hidden = reason === undefined;
    this.#reason.textContent = reason ?? '';
    if (reason !== undefined) this.#root.dataset.reason = reason;
    else delete this.#root.dataset.reason;
  }

  /** Clears the figures of a previous run. */
  reset(): void {
    for (const el of this.#values.values()) el.textContent = '—';
    for (const key of Object.keys(this.#root.dataset)) {
      if (key !== 'device') delete this.#root.dataset[key];
    }
    this.#firstLoss = Number.NaN;
    this.#recentMs = [];
  }

  /** The device the run opened (from `trainMlp`'s `onStart`). */
  showDevice(device: Device): void {
    const { info } = device;
    this.#set('device', info.name);
    this.#set('backend', info.backend);
    this.#set('queues', String(info.queueCount));
    if (device instanceof CpuDevice) {
      this.#set(
        'workers',
        `${device.liveWorkers} Web Workers (${device.mode} mode, ${device.workersPerQueue} per queue)`,
      );
      this.#root.dataset.workers = String(device.liveWorkers);
    } else {
      this.#set('workers', 'none (GPU)');
    }
    this.#root.dataset.backend = info.backend;
    this.#root.dataset.deviceName = info.name;
    this.#root.dataset.queues = String(info.queueCount);
  }

  /** One step's loss and time (from `onStep`); ms/step is the median of the last 10 steps. */
  showStep(step: number, steps: number, loss: number, stepMs: number): void {
    if (step === 1) this.#firstLoss = loss;
    this.#recentMs.push(stepMs);
    if (this.#recentMs.length > 10) this.#recentMs.shift();
    const sorted = [...this.#recentMs].sort((a, b) => a - b);
    const ms = sorted[sorted.length >> 1]!;
    this.#set('step', `${step} / ${steps}`);
    this.#set('loss', `${this.#firstLoss.toFixed(4)} → ${loss.toFixed(4)}`);
    this.#set('ms', ms.toFixed(1));
    Object.assign(this.#root.dataset, {
      step: String(step),
      firstLoss: String(this.#firstLoss),
      lastLoss: String(loss),
      msPerStep: String(ms),
    });
  }

  /** The run's result: ms/step after warm-up and the bytes moved per direction. */
  showResult(result: TrainMlpResult): void {
    const t = result.transfers;
    this.#set('ms', `${result.msPerStep.toFixed(1)} (median after ${result.warmup} warm-up steps)`);
    this.#set(
      'h2d',
      `${formatBytes(t.hostToDevice)} (weights ${formatBytes(t.weightsToDevice)}, batches ${formatBytes(t.batchesToDevice)})`,
    );
    this.#set(
      'd2h',
      `${formatBytes(t.deviceToHost)} (weights ${formatBytes(t.weightsToHost)}, loss ${formatBytes(t.lossToHost)})`,
    );
    Object.assign(this.#root.dataset, {
      msPerStep: String(result.msPerStep),
      hostToDevice: String(t.hostToDevice),
      deviceToHost: String(t.deviceToHost),
    });
  }

  #set(field: Field, text: string): void {
    this.#values.get(field)!.textContent = text;
  }
}
