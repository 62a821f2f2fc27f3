// A stacked bar chart drawn as SVG by the page (no library, no CDN): one bar per label, one
// segment per series. Colours come from the stylesheet (.series-N), so light and dark themes
// and the strict CSP both hold; each bar has a <title> with its figures for pointer users, and
// the page offers the same figures as a table for everyone else.

import { niceCeiling, type Series } from './chart-model.js';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 240;
const PAD = { top: 12, right: 8, bottom: 28, left: 64 };

export interface ChartOptions {
  /** Read by screen readers as the chart's name. */
  title: string;
  labels: string[];
  series: Series[];
  /** How a value is written on the axis and in titles. */
  format: (value: number) => string;
  /** Shorter text under the bars (every few bars when they are many). */
  shortLabel?: (label: string) => string;
  width: number;
}

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<SVGElement | string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

export function stackedBars(options: ChartOptions): SVGSVGElement {
  const { labels, series, format, width } = options;
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const top = niceCeiling(Math.max(0, ...totals));
  const plotW = Math.max(1, width - PAD.left - PAD.right);
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, labels.length);
  const barW = Math.max(1, Math.min(40, slot * 0.75));
  const y = (value: number) => PAD.top + plotH - (value / top) * plotH;

  const svg = el('svg', { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-label': options.title, class: 'chart' });
  for (const fraction of [0, 0.5, 1]) {
    const at = y(top * fraction);
    svg.append(
      el('line', { x1: PAD.left, x2: width - PAD.right, y1: at, y2: at, class: 'grid' }),
      el('text', { x: PAD.left - 6, y: at + 4, 'text-anchor': 'end', class: 'axis' }, format(top * fraction)),
    );
  }
  // About one label per 56 pixels, so they never overlap.
  const every = Math.max(1, Math.ceil(56 / slot));
  labels.forEach((label, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    const parts = series.map((s) => `${s.name}: ${format(s.values[i] ?? 0)}`).filter((_, k) => (series[k]!.values[i] ?? 0) > 0);
    const bar = el('g', { class: 'bar-group', 'data-label': label, 'data-total': totals[i]! },
      el('title', {}, `${label}: ${format(totals[i]!)}${parts.length ? ` (${parts.join(', ')})` : ''}`));
    let base = 0;
    series.forEach((s, k) => {
      const value = s.values[i] ?? 0;
      if (value <= 0) return;
      bar.append(el('rect', { x, width: barW, y: y(base + value), height: Math.max(0.5, y(base) - y(base + value)), class: `series-${k % 8}`, 'data-series': s.name, 'data-value': value }));
      base += value;
    });
    svg.append(bar);
    if (i % every === 0) {
      svg.append(el('text', { x: x + barW / 2, y: HEIGHT - 8, 'text-anchor': 'middle', class: 'axis' }, options.shortLabel ? options.shortLabel(label) : label));
    }
  });
  svg.append(el('line', { x1: PAD.left, x2: width - PAD.right, y1: y(0), y2: y(0), class: 'baseline' }));
  return svg;
}
