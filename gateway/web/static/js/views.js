// views.js: renderings of a seat's private view of the game (Observation.view), with special
// cases where a generic rendering would be hard to read (matrix payoffs, deliberation score
// sheets).

import { el, fmtNum, humanize, num, renderValue, viewOf } from './format.js';

/** frac writes a protojson Rational {num, den}. */
export function frac(r) {
  if (!r) return '0';
  const n = num(r.num);
  const d = num(r.den) || 1;
  return d === 1 ? String(n) : fmtNum(n / d);
}

/** optionPoints maps each option id of a deliberation view to this seat's points for it. */
export function optionPoints(view) {
  const out = new Map();
  if (!view || !view.issues || !view.points) return out;
  view.issues.forEach((is, i) => {
    const pts = (view.points[i] && view.points[i].points) || [];
    (is.options || []).forEach((o, j) => out.set(o.id, num(pts[j])));
  });
  return out;
}

function renderMatrix(v) {
  const t = v.table || {};
  const players = t.players || ['row', 'column'];
  const rows = t.rows || [];
  const cols = t.cols || [];
  const cells = t.cells || [];
  const table = el(
    'table',
    { class: 'grid matrix' },
    el('thead', {}, el('tr', {}, el('th', {}, `${players[0]} \\ ${players[1]}`), cols.map((c) => el('th', {}, c.label || c.id)))),
    el(
      'tbody',
      {},
      rows.map((r, i) =>
        el(
          'tr',
          {},
          el('th', {}, r.label || r.id),
          cols.map((c, j) => {
            const p = (cells[i * cols.length + j] || {}).payoffs || [];
            return el('td', {}, `${frac(p[0])}, ${frac(p[1])}`);
          }),
        ),
      ),
    ),
  );
  const rest = { ...v };
  delete rest.table;
  return [t.title ? el('p', {}, el('strong', {}, t.title)) : null, table, el('p', { class: 'muted small' }, `Cells: ${players[0]}'s payoff, ${players[1]}'s payoff.`), renderValue(rest)];
}

function renderDeliberation(v) {
  const pts = optionPoints(v);
  const sheet = el(
    'table',
    { class: 'grid small sheet' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Issue'), el('th', {}, 'Options (your points)'))),
    el(
      'tbody',
      {},
      (v.issues || []).map((is) =>
        el(
          'tr',
          {},
          el('th', {}, `${is.id}: ${is.label || ''}`),
          el('td', {}, (is.options || []).map((o) => el('span', { class: 'opt' }, `${o.id} ${o.label || ''} `, el('b', {}, `${pts.has(o.id) ? pts.get(o.id) : '?'}`)))),
        ),
      ),
    ),
  );
  const facts = {
    title: v.title,
    'your minimum score': v.threshold,
    'p1 unanimity bonus': v.p1Bonus,
    quorum: v.quorum,
    stage: (v.stage || '').replace('STAGE_', '').toLowerCase(),
    'discussion turn': v.discussionTurn,
  };
  return [renderValue(Object.fromEntries(Object.entries(facts).filter(([, x]) => x !== undefined))), el('h3', {}, 'Your score sheet'), sheet];
}

function renderCoalition(v) {
  const players = v.players || [];
  const name = (i) => players[num(i)] || `seat ${num(i)}`;
  const unit = v.unit || '';
  const facts = {};
  if (num(v.round) > 0) facts.phase = `private negotiation, round ${num(v.round)} of ${num(v.rounds)}`;
  else facts.phase = `binding proposals: ${num(v.proposalsMade)} of at most ${num(v.maxProposals)} made`;
  if (v.active !== undefined) facts['active player'] = name(v.active);
  if (v.proposer !== undefined) facts['drawn to propose'] = name(v.proposer);
  if (v.pending) facts['proposal being voted on'] = (v.pending.shares || []).map((s) => `${name(s.seat)} ${fmtNum((s.receives || {})[unit] || 0)} ${unit}`).join(', ');
  const values = el(
    'table',
    { class: 'grid small' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Coalition'), el('th', { class: 'num' }, 'Value'))),
    el('tbody', {}, (v.values || []).map((c) => el('tr', {}, el('td', {}, (c.members || []).map(name).join('+')), el('td', { class: 'num' }, `${fmtNum(c.value)} ${unit}`)))),
  );
  return [renderValue(facts), el('h3', {}, 'What each coalition can share'), values];
}

const hidden = new Set(['scenario', 'briefing', 'statements']);

// Fields of a view that hold a seat index, shown by the seat's name.
const seatFields = /^(standingProposer|proposer|active|speaker|seat|opener|mover|toMove)$/;

/** renderView renders the view of an observation. */
export function renderView(obs) {
  const [family, view] = viewOf(obs);
  const names = (obs.seats || []).map((s) => s.name);
  if (!view) return el('span', { class: 'muted' }, 'This game gives no private view.');
  if (family === 'matrix') return el('div', {}, renderMatrix(view));
  if (family === 'deliberation') return el('div', {}, renderDeliberation(view));
  if (family === 'coalition') return el('div', {}, renderCoalition(view));
  const rest = Object.fromEntries(
    Object.entries(view)
      .filter(([k]) => !hidden.has(k))
      .map(([k, x]) => [k, seatFields.test(k) && typeof x === 'number' && names[x] ? names[x] : x]),
  );
  return el('div', {}, el('p', { class: 'muted small' }, humanize(family)), renderValue(rest));
}
