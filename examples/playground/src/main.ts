/**
 * The Keel playground page: trains the reference MLP with `trainMlp` on WebGPU and on the CPU task
 * device (Web Workers) at the same time, drawing both losses on one chart as they arrive (`onStep`).
 * Stop aborts both runs through one AbortController (`trainMlp` stops at the next step boundary and
 * rejects CANCELLED). A side that cannot run here (no `navigator.gpu`, no adapter, no cross-origin
 * isolation) says why instead of staying blank.
 *
 * Query parameters: `steps` (default 100), `batch` (default 128), `workers` (CPU workers, default every
 * core), `autostart=1` (train at once; the end-to-end test uses it).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import {
  type GemmTiling,
  type TrainDeviceKind,
  trainMlp,
  WGSL_GEMM_TILING,
  WGSL_GEMM_TILING_GPU,
} from '@keel/mlp';
import { LossChart, type Series } from './chart';
import { DevicePanel } from './panel';

interface Side {
  readonly kind: TrainDeviceKind;
  readonly panel: DevicePanel;
  readonly series: Series;
}

const byId = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`playground: the page has no #${id}`);
  return el as T;
};

const query = new URLSearchParams(location.search);
const stepsInput = byId<HTMLInputElement>('steps');
const batchInput = byId<HTMLInputElement>('batch');
const startButton = byId<HTMLButtonElement>('start');
const stopButton = byId<HTMLButtonElement>('stop');
if (query.has('steps')) stepsInput.value = query.get('steps')!;
if (query.has('batch')) batchInput.value = query.get('batch')!;
const workers = query.has('workers') ? Number(query.get('workers')) : undefined;
const tilingParam = query.get('tiling');

/**
 * The WGSL GEMM tiling: trainMlp's choice for the adapter (`wgslGemmTilingFor`: on Chromium's
 * SwiftShader a small register tiling that compiles in about half a second, where the lavapipe one
 * takes minutes and drops the instance); `?tiling=gpu` or `?tiling=software` forces one.
 */
function wgslTilingHere(): GemmTiling | undefined {
  if (tilingParam === 'gpu') return WGSL_GEMM_TILING_GPU;
  if (tilingParam === 'software') return WGSL_GEMM_TILING;
  return undefined;
}

const sides: Side[] = [
  { kind: 'webgpu', title: 'WebGPU', color: '#2563eb' },
  { kind: 'cpu', title: 'CPU task device (Web Workers)', color: '#d97706' },
].map(({ kind, title, color }) => ({
  kind: kind as TrainDeviceKind,
  panel: new DevicePanel(byId(`side-${kind}`), title),
  series: { label: title, color, losses: [], dashed: kind === 'cpu' },
}));
const chart = new LossChart(
  byId<HTMLCanvasElement>('chart'),
  sides.map((s) => s.series),
);
chart.draw();

byId('isolation').textContent = globalThis.crossOriginIsolated
  ? 'cross-origin isolated: SharedArrayBuffer available'
  : 'not cross-origin isolated (no COOP/COEP headers): the CPU task device cannot run';

/** Why `kind` cannot run in this page, or undefined when it may. */
function unavailableReason(kind: TrainDeviceKind): string | undefined {
  if (kind === 'webgpu' && !('gpu' in navigator)) {
    return 'This browser exposes no WebGPU (navigator.gpu is undefined). Use a browser with WebGPU, or Chromium with --enable-unsafe-webgpu.';
  }
  if (kind === 'cpu' && !globalThis.crossOriginIsolated) {
    return 'The page is not cross-origin isolated, so there is no SharedArrayBuffer for the Web Workers. Serve it with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp (pnpm playground does).';
  }
  return undefined;
}

async function train(side: Side, steps: number, batch: number, signal: AbortSignal): Promise<void> {
  const { panel, series, kind } = side;
  panel.reset();
  const reason = unavailableReason(kind);
  if (reason !== undefined) {
    panel.setState('unavailable', 'unavailable here', reason);
    return;
  }
  panel.setState('running', 'opening the device…');
  try {
    const wgslTiling = kind === 'webgpu' ? wgslTilingHere() : undefined;
    const result = await trainMlp({
      device: kind,
      steps,
      batch,
      ...(kind === 'cpu' && workers !== undefined ? { workers } : {}),
      ...(kind === 'webgpu' && wgslTiling !== undefined ? { wgslTiling } : {}),
      abortSignal: signal,
      onStart: ({ device }) => {
        panel.showDevice(device);
        panel.setState('running', 'training…');
      },
      onStep: ({ step, loss, stepMs }) => {
        series.losses.push(loss);
        panel.showStep(step, steps, loss, stepMs);
        chart.redraw();
      },
    });
    panel.showResult(result);
    panel.setState(
      'done',
      `done: ${steps} step${steps === 1 ? '' : 's'} in ${(result.trainMs / 1000).toFixed(1)} s`,
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (KeelError.is(error, ErrorCode.CANCELLED)) panel.setState('stopped', 'stopped', message);
    else if (KeelError.is(error, ErrorCode.UNAVAILABLE))
      panel.setState('unavailable', 'unavailable here', message);
    else panel.setState('error', 'failed', message);
  }
}

let running: AbortController | undefined;

async function start(): Promise<void> {
  if (running !== undefined) return;
  const steps = Number(stepsInput.value);
  const batch = Number(batchInput.value);
  const controller = new AbortController();
  running = controller;
  startButton.disabled = true;
  stopButton.disabled = false;
  chart.reset(steps);
  document.body.dataset.run = 'running';
  // Both sides at once: each trains on its own device; the chart shows them side by side.
  await Promise.all(sides.map((side) => train(side, steps, batch, controller.signal)));
  running = undefined;
  startButton.disabled = false;
  stopButton.disabled = true;
  document.body.dataset.run = 'finished';
}

byId<HTMLFormElement>('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  void start();
});
stopButton.addEventListener('click', () => running?.abort(new Error('Stop pressed')));
if (query.get('autostart') === '1') void start();
