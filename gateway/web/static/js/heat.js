// heat.js: the tournament's heat maps (one value per ordered pair of agents), in colours whose
// text passes WCAG AA contrast on every cell, laid out to fit, stack or scroll at any width.

import { el, fmtNum, fmtRate, plural } from './format.js';

// The palettes' ends: dark enough that white text on them has a contrast of 6 or more.
const LIGHT = [255, 255, 255];
const BLUE = [31, 78, 121]; // payoffs: white (low) to blue (high)
const RED = [178, 34, 34]; // rates: red (0) - white (1/2) - green (1)
const GREEN = [27, 110, 60];
export const MISSING = '#f4f5f7';

const mix = (a, b, t) => a.map((x, i) => Math.round(x + (b[i] - x) * t));
const rgb = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;

/** heatRGB is the [r, g, b] of value v in [lo, hi]; null for a missing value. */
export function heatRGB(v, lo, hi, diverging) {
  if (v === undefined || v === null || !Number.isFinite(v)) return null;
  const t = Math.min(1, Math.max(0, hi > lo ? (v - lo) / (hi - lo) : 0.5));
  if (diverging) return t < 0.5 ? mix(LIGHT, RED, (0.5 - t) * 2) : mix(LIGHT, GREEN, (t - 0.5) * 2);
  return mix(LIGHT, BLUE, t);
}

/** heatColor is the CSS colour of a cell: white to blue, or red-white-green for rates. */
export function heatColor(v, lo, hi, diverging) {
  const c = heatRGB(v, lo, hi, diverging);
  return c ? rgb(c) : MISSING;
}

/** luminance is the WCAG 2 relative luminance of an [r, g, b] colour (0-255 channels). */
export function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** contrast is the WCAG 2 contrast ratio of two [r, g, b] colours, 1 to 21. */
export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/**
 * inkOn is the text colour for a background: black or white, whichever contrasts more. One of
 * the two always reaches 4.58:1 (they tie at a luminance of about 0.18), above AA's 4.5.
 */
export function inkOn(bg) {
  return contrast(bg, [0, 0, 0]) >= contrast(bg, [255, 255, 255]) ? '#000' : '#fff';
}

/** heatInk is the text colour of a cell with value v (see heatColor). */
export function heatInk(v, lo, hi, diverging) {
  const c = heatRGB(v, lo, hi, diverging);
  return c ? inkOn(c) : '';
}

/**
 * heatmap is a table of one value per (row agent, column agent) cell of a pair table. Agents
 * are numbered: a row is headed "1. fair", a column "1", so twelve long names still fit (each
 * header's title holds the whole name).
 */
export function heatmap(pairs, title, pick, opts) {
  const rows = pairs.rows || [];
  const cols = pairs.cols || [];
  const cells = pairs.cells || [];
  const numbers = new Map();
  for (const a of [...rows, ...cols]) if (!numbers.has(a)) numbers.set(a, numbers.size + 1);
  const values = [];
  rows.forEach((_, r) =>
    cols.forEach((_, c) => {
      const v = pick((cells[r] && cells[r].cells && cells[r].cells[c]) || {});
      if (v !== undefined && v !== null) values.push(Number(v));
    }),
  );
  const lo = opts.rate ? 0 : Math.min(...values, 0);
  const hi = opts.rate ? 1 : Math.max(...values, 0);
  return el(
    'div',
    { class: 'heatbox' },
    el('h3', {}, title),
    el(
      'div',
      { class: 'heatscroll', tabindex: '0', role: 'region', 'aria-label': title },
      el(
        'table',
        { class: 'grid heat', dataset: { heat: opts.id } },
        el('thead', {}, el('tr', {}, el('th', { class: 'corner' }, `${opts.rowSeat} \\ ${opts.colSeat}`), cols.map((c) => el('th', { class: 'num colhead', title: c, scope: 'col' }, String(numbers.get(c)))))),
        el(
          'tbody',
          {},
          rows.map((rl, r) =>
            el(
              'tr',
              {},
              el('th', { class: 'rowhead', title: rl, scope: 'row' }, `${numbers.get(rl)}. ${rl}`),
              cols.map((cl, c) => {
                const cell = (cells[r] && cells[r].cells && cells[r].cells[c]) || {};
                const v = pick(cell);
                const missing = v === undefined || v === null;
                // A rate over no decisive match: the matches were played, all tied.
                const tied = missing && opts.rate && Number(cell.matches || 0) > 0;
                const tip = `${rl} (${opts.rowSeat}) against ${cl} (${opts.colSeat}): ${plural(cell.matches, 'match', 'matches')}${tied ? ', none decisive' : ''}`;
                const td = el('td', { class: 'cell', title: tip }, tied ? 'ties' : missing ? '–' : opts.rate ? fmtRate(v) : fmtNum(v));
                const n = missing ? undefined : Number(v);
                td.style.backgroundColor = heatColor(n, lo, hi, opts.rate);
                td.style.color = heatInk(n, lo, hi, opts.rate);
                return td;
              }),
            ),
          ),
        ),
      ),
    ),
  );
}

/** heatmaps lays out heat maps side by side while they fit, one above the other when not. */
export function heatmaps(agents, ...maps) {
  const box = el('div', { class: 'heatmaps' }, maps);
  box.style.setProperty('--heat-cols', String(Math.max(1, agents)));
  return box;
}
