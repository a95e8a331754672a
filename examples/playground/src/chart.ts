/**
 * The playground's loss chart, drawn by hand on a canvas (no chart library): one line per device,
 * x = step, y = loss (axes scaled to the data seen so far). `redraw()` is cheap and coalesced to one
 * draw per animation frame, so `onStep` may call it every step.
 */

export interface Series {
  readonly label: string;
  readonly color: string;
  /** Losses by step (index 0 = step 1). */
  readonly losses: number[];
  /** Dashed line (the devices compute the same losses, so one line is dashed to show both). */
  readonly dashed?: boolean;
}

const PAD = { left: 66, right: 16, top: 16, bottom: 34 };

export class LossChart {
  readonly #canvas: HTMLCanvasElement;
  readonly #series: readonly Series[];
  #steps = 1;
  #pending = false;

  constructor(canvas: HTMLCanvasElement, series: readonly Series[]) {
    this.#canvas = canvas;
    this.#series = series;
  }

  /** Sets the run's step count (the x-axis grows up to it) and clears the lines. */
  reset(steps: number): void {
    this.#steps = Math.max(1, steps);
    for (const s of this.#series) s.losses.length = 0;
    this.redraw();
  }

  /** Draws on the next animation frame (several calls in one frame draw once). */
  redraw(): void {
    if (this.#pending) return;
    this.#pending = true;
    requestAnimationFrame(() => {
      this.#pending = false;
      this.draw();
    });
  }

  /** Draws now. */
  draw(): void {
    const ctx = this.#canvas.getContext('2d');
    if (ctx === null) return;
    const { width, height } = this.#canvas;
    const w = width - PAD.left - PAD.right;
    const h = height - PAD.top - PAD.bottom;
    ctx.clearRect(0, 0, width, height);
    ctx.font = '12px system-ui, sans-serif';

    const all = this.#series.flatMap((s) => s.losses).filter(Number.isFinite);
    const max = all.length === 0 ? 3 : Math.max(...all) * 1.05;
    const min = all.length === 0 ? 0 : Math.max(0, Math.min(...all) * 0.95);
    const span = max - min || 1;
    // The x-axis follows the run as it goes (a quarter ahead of the longest line), up to its step count,
    // so a long run does not squeeze its first steps into the left edge.
    const reported = Math.max(0, ...this.#series.map((s) => s.losses.length));
    const xMax = Math.min(this.#steps, Math.max(10, Math.ceil(reported * 1.25)));
    const x = (step: number): number => PAD.left + (w * (step - 1)) / Math.max(1, xMax - 1);
    const y = (loss: number): number => PAD.top + h * (1 - (loss - min) / span);

    // Grid and axis labels.
    ctx.strokeStyle = '#e5e7eb';
    ctx.fillStyle = '#6b7280';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const v = min + (span * i) / 4;
      const py = y(v);
      ctx.beginPath();
      ctx.moveTo(PAD.left, py);
      ctx.lineTo(PAD.left + w, py);
      ctx.stroke();
      ctx.fillText(v.toFixed(3), PAD.left - 6, py);
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (const step of new Set([1, Math.ceil(xMax / 2), xMax])) {
      ctx.textAlign = step === xMax ? 'right' : step === 1 ? 'left' : 'center';
      ctx.fillText(String(step), x(step), PAD.top + h + 6);
    }
    ctx.textAlign = 'center';
    ctx.fillText('step', PAD.left + w / 2, PAD.top + h + 20);
    ctx.save();
    ctx.translate(12, PAD.top + h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText('loss', 0, -6);
    ctx.restore();

    // One line (and a dot on its last point) per device, and the legend.
    const legendWidth = Math.max(...this.#series.map((s) => ctx.measureText(s.label).width)) + 22;
    this.#series.forEach((s, i) => {
      ctx.strokeStyle = s.color;
      ctx.fillStyle = s.color;
      ctx.lineWidth = s.dashed ? 2 : 4;
      ctx.setLineDash(s.dashed ? [7, 5] : []);
      ctx.beginPath();
      s.losses.forEach((loss, k) => {
        if (k === 0) ctx.moveTo(x(k + 1), y(loss));
        else ctx.lineTo(x(k + 1), y(loss));
      });
      ctx.stroke();
      const last = s.losses.length;
      if (last > 0) {
        ctx.beginPath();
        ctx.arc(x(last), y(s.losses[last - 1]!), 3, 0, 2 * Math.PI);
        ctx.fill();
      }
      ctx.setLineDash([]);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      const lx = PAD.left + w - legendWidth - 8;
      const ly = PAD.top + 10 + 18 * i;
      ctx.fillRect(lx, ly - (s.dashed ? 1 : 2), 16, s.dashed ? 2 : 4);
      ctx.fillStyle = '#1f2937';
      ctx.fillText(s.label, lx + 22, ly);
    });
  }
}
