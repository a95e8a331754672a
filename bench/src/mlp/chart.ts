/**
 * The `mlp` suite's chart: ms/step per system as horizontal bars on a logarithmic axis (the systems
 * span two orders of magnitude), grouped by where the step runs (CPU, WebGPU), value printed on every
 * bar. Hand-written SVG: no dependency, stable output, readable in a browser or on GitHub.
 */

export interface ChartBar {
  readonly label: string;
  /** Milliseconds per step (bars with a non-finite value are left out). */
  readonly ms: number;
  /** Keel's own bars are drawn in the accent colour. */
  readonly keel: boolean;
}

export interface ChartGroup {
  readonly name: string;
  readonly bars: readonly ChartBar[];
}

export interface ChartSpec {
  readonly title: string;
  /** Lines under the title (machine, adapter, ratios, date). */
  readonly notes: readonly string[];
  readonly groups: readonly ChartGroup[];
}

const escapeXml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const formatMs = (ms: number): string =>
  ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toPrecision(2);

/** Axis labels: 0.1, 1, 10, 100, 1000 (no trailing zeros). */
const formatTick = (v: number): string => String(Number(v.toPrecision(3)));

/** Cuts `text` to `max` characters with an ellipsis. */
const clip = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/** The chart as an SVG document. */
export function mlpChartSvg(spec: ChartSpec): string {
  const groups = spec.groups
    .map((g) => ({ ...g, bars: g.bars.filter((b) => Number.isFinite(b.ms) && b.ms > 0) }))
    .filter((g) => g.bars.length > 0);
  const values = groups.flatMap((g) => g.bars.map((b) => b.ms));
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.max(10 * lo, 10 ** Math.ceil(Math.log10(Math.max(...values))));
  const width = 860;
  const labelWidth = 240;
  const right = 90;
  const plotWidth = width - labelWidth - right;
  const barHeight = 22;
  const gap = 8;
  const groupGap = 26;
  const top = 42 + spec.notes.length * 18 + 16;
  const x = (ms: number): number => labelWidth + (plotWidth * Math.log10(ms / lo)) / Math.log10(hi / lo);

  const body: string[] = [];
  let y = top;
  for (const g of groups) {
    body.push(`<text x="12" y="${y + 14}" class="group">${escapeXml(g.name)}</text>`);
    y += 22;
    for (const b of g.bars) {
      const w = Math.max(2, x(b.ms) - labelWidth);
      body.push(
        `<text x="${labelWidth - 10}" y="${y + barHeight / 2 + 5}" text-anchor="end">${escapeXml(b.label)}</text>`,
        `<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" class="${b.keel ? 'keel' : 'other'}"/>`,
        `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + barHeight / 2 + 5}" class="value">${formatMs(b.ms)} ms</text>`,
      );
      y += barHeight + gap;
    }
    y += groupGap - gap;
  }
  const plotBottom = y - groupGap + gap + 4;
  const grid: string[] = [];
  for (let decade = lo; decade <= hi * 1.0001; decade *= 10) {
    for (const m of [1, 2, 5]) {
      const v = decade * m;
      if (v > hi * 1.0001) break;
      const gx = x(v).toFixed(1);
      grid.push(
        `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${plotBottom}" class="${m === 1 ? 'major' : 'minor'}"/>`,
      );
      if (m === 1 || (hi / lo <= 100 && m !== 1)) {
        grid.push(
          `<text x="${gx}" y="${plotBottom + 16}" text-anchor="middle" class="axis">${formatTick(v)}</text>`,
        );
      }
    }
  }
  const height = plotBottom + 44;
  const notes = spec.notes.map(
    (line, i) => `<text x="12" y="${48 + i * 18}" class="note">${escapeXml(clip(line, 125))}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="13">`,
    '<style>',
    '  .title { font-size: 17px; font-weight: 600; fill: #111; }',
    '  .note { fill: #555; font-size: 12px; }',
    '  .group { font-weight: 600; fill: #222; }',
    '  .keel { fill: #2563eb; }',
    '  .other { fill: #f59e0b; }',
    '  .value { fill: #222; font-size: 12px; }',
    '  .axis { fill: #666; font-size: 11px; }',
    '  .major { stroke: #bbb; stroke-width: 1; }',
    '  .minor { stroke: #e5e5e5; stroke-width: 1; }',
    '  text { fill: #222; }',
    '</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="12" y="26" class="title">${escapeXml(clip(spec.title, 90))}</text>`,
    ...notes,
    ...grid,
    ...body,
    `<text x="${labelWidth + plotWidth / 2}" y="${plotBottom + 34}" text-anchor="middle" class="axis">ms per training step (log scale; shorter is faster)</text>`,
    '</svg>',
    '',
  ].join('\n');
}
