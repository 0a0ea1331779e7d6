// format.js: DOM building and readable renderings of Parley's protojson messages (moves,
// proposals, outcomes, views). Pure functions besides el(); no innerHTML anywhere, so text from
// agents is always shown as text.

/** el builds an element: el('td', {class: 'x', onclick: f}, 'text', child, [more]). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k in node && typeof v !== 'string') node[k] = v;
    else node.setAttribute(k, v === true ? '' : v);
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else node.append(c instanceof Node ? c : String(c));
  }
}

/** clear removes every child of node and appends the given children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** num reads a protojson number (int64 come as strings); missing is 0. */
export function num(v) {
  if (v === undefined || v === null || v === '') return 0;
  return Number(v);
}

/** fmtNum writes a number for people: whole numbers as they are, others with 2 decimals. */
export function fmtNum(v) {
  const n = num(v);
  if (Number.isInteger(n)) return String(n);
  return n.toFixed(2);
}

/** plural writes a count with its noun: "1 match", "2 matches", "0 matches". */
export function plural(n, one, many) {
  const k = num(n);
  return `${fmtNum(k)} ${k === 1 ? one : many}`;
}

/**
 * fmtInterval writes a rating interval, "1480–1620"; "–" when it is a single point (one
 * match, or every resample the same), which says nothing about the uncertainty.
 */
export function fmtInterval(low, high) {
  const lo = Math.round(num(low));
  const hi = Math.round(num(high));
  return lo === hi ? '–' : `${lo}–${hi}`;
}

/** fmtRate writes a 0..1 rate as a percentage. */
export function fmtRate(v) {
  if (v === undefined || v === null) return '–';
  return `${Math.round(num(v) * 100)}%`;
}

/** seatNames returns the display names of seats (SeatInfo list), indexed by seat. */
export function seatNames(seats) {
  const names = [];
  (seats || []).forEach((s, i) => {
    names[num(s.seat ?? i)] = s.name || `seat ${i}`;
  });
  return names;
}

/** nameOf returns the name of seat i. */
export function nameOf(names, i) {
  const n = num(i);
  return (names && names[n]) || `seat ${n}`;
}

/** agentName is how a seat's agent is shown: its label, else name and version. */
export function agentName(seat) {
  if (!seat) return '';
  if (seat.label) return seat.label;
  const a = seat.agent || {};
  return a.version ? `${a.name} ${a.version}` : a.name || '?';
}

/** amounts writes a resource map: "40 Dollars", "1 book, 2 hat". */
export function amounts(m) {
  return Object.entries(m || {})
    .map(([r, v]) => `${fmtNum(v)} ${r}`)
    .join(', ');
}

/** formatAllocation writes an Allocation: "P1 gives 40 Dollars; P2 receives 1 book". */
export function formatAllocation(alloc, names) {
  const parts = [];
  for (const s of (alloc && alloc.shares) || []) {
    const who = nameOf(names, s.seat);
    const gives = amounts(s.gives);
    const receives = amounts(s.receives);
    if (gives) parts.push(`${who} gives ${gives}`);
    if (receives) parts.push(`${who} receives ${receives}`);
    if (!gives && !receives) parts.push(`${who} nothing`);
  }
  return parts.join('; ') || 'nothing';
}

/** formatDeal writes a Deal, with the issues' labels when known: "A: A2 (label), B: B1". */
export function formatDeal(deal, issues) {
  const byId = new Map();
  for (const is of issues || []) {
    const opts = new Map((is.options || []).map((o) => [o.id, o.label]));
    byId.set(is.id, { label: is.label, opts });
  }
  return ((deal && deal.choices) || [])
    .map((c) => {
      const is = byId.get(c.issue);
      const optLabel = is && is.opts.get(c.option);
      return optLabel ? `${c.option} (${optLabel})` : c.option || `${c.issue}?`;
    })
    .join(', ');
}

/** formatProposal writes a Proposal: "P1 gives 40 Dollars", "deal A1 (label), B2". */
export function formatProposal(p, names, issues) {
  if (!p) return '';
  if (p.allocation) return formatAllocation(p.allocation, names);
  if (p.deal) return `deal ${formatDeal(p.deal, issues)}`;
  return '(empty proposal)';
}

/**
 * describeMove writes what a move does, for a move the record does not word (its summary is
 * the rules' words): "proposes: P1 gives 40 Dollars", "accepts".
 */
export function describeMove(move, names, issues) {
  if (!move) return 'no move';
  if (move.propose) return `proposes: ${formatProposal(move.propose.proposal, names, issues)}`;
  if (move.accept) return 'accepts';
  if (move.reject) return 'rejects';
  if (move.pass) return 'passes';
  if (move.choose) return `chooses ${move.choose.option || '?'}`;
  if (move.say) return 'speaks';
  return 'an unknown move';
}

const causes = {
  END_CAUSE_AGREEMENT: 'Agreement',
  END_CAUSE_REJECTED: 'Rejected',
  END_CAUSE_TURN_LIMIT: 'Turn limit reached',
  END_CAUSE_AGENT_FAULT: 'Agent fault',
  END_CAUSE_VOID: 'Void',
  END_CAUSE_COMPLETED: 'Completed',
};

/** causeText names an EndCause for people. */
export function causeText(cause) {
  return causes[cause] || 'Ended';
}

/** recipients writes who a message is for: "everyone" or "B and C (private)". */
export function recipients(to, names) {
  if (!to || to.length === 0) return 'everyone';
  return `${to.map((i) => nameOf(names, i)).join(' and ')} (private)`;
}

/** humanize turns a protojson key into words: "turnsLeft" -> "turns left". */
export function humanize(key) {
  return String(key)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/** fmtDuration writes a protojson Duration ("10s", "1.5s") for people. */
export function fmtDuration(d) {
  if (!d) return '';
  const s = parseFloat(d);
  if (!Number.isFinite(s)) return d;
  if (s >= 60) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`.replace(' 0 s', '');
  return `${fmtNum(s)} s`;
}

/** fmtClock writes a number of milliseconds as m:ss. */
export function fmtClock(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** fmtTime writes a protojson Timestamp as a local time. */
export function fmtTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

/**
 * renderValue renders any protojson value as nested definition lists and tables, for a
 * seat's view of the game and the match parameters.
 */
export function renderValue(v, depth = 0) {
  if (v === null || v === undefined) return el('span', { class: 'muted' }, '–');
  if (Array.isArray(v)) {
    if (v.length === 0) return el('span', { class: 'muted' }, 'none');
    if (v.every((x) => typeof x !== 'object' || x === null)) return v.map((x) => (typeof x === 'object' ? '–' : String(x))).join(', ');
    if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x)) && depth < 3) return renderTable(v, depth);
    return el('ol', { class: 'plain' }, v.map((x) => el('li', {}, renderValue(x, depth + 1))));
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v);
    // A Rational {num, den} is a number.
    if ('den' in v && entries.every(([k]) => k === 'num' || k === 'den')) return fmtNum(num(v.num) / (num(v.den) || 1));
    if (entries.length === 0) return el('span', { class: 'muted' }, '–');
    return el(
      'dl',
      { class: 'kv' },
      entries.map(([k, x]) => [el('dt', {}, humanize(k)), el('dd', {}, renderValue(x, depth + 1))]),
    );
  }
  if (typeof v === 'string' && v.includes('\n')) return el('div', { class: 'pre' }, v);
  return String(v);
}

function renderTable(rows, depth) {
  const keys = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  return el(
    'table',
    { class: 'grid small' },
    el('thead', {}, el('tr', {}, keys.map((k) => el('th', {}, humanize(k))))),
    el(
      'tbody',
      {},
      rows.map((r) => el('tr', {}, keys.map((k) => el('td', {}, r[k] === undefined ? '' : renderValue(r[k], depth + 1))))),
    ),
  );
}

// The object-valued fields of an Observation that are not its view (in protojson, time
// stamps and durations are strings and lists are arrays).
const observationObjects = new Set(['lastRejection']);

/**
 * viewOf returns [family, view] of an observation's view oneof: its one object-valued field
 * besides observationObjects, named after the family, so a new family needs no edit here.
 */
export function viewOf(obs) {
  for (const [k, v] of Object.entries(obs || {})) {
    if (v && typeof v === 'object' && !Array.isArray(v) && !observationObjects.has(k)) return [k, v];
  }
  return ['', null];
}

/**
 * moveWords is a seat's move in the rules' words (ActionTaken.summary, HistoryEntry.summary:
 * "P1 proposes: P1 gives 40 Dollars to P2 and keeps 60."), to follow the seat's name on a
 * line: without the name it starts with and the closing full stop.
 */
export function moveWords(summary, who) {
  const s = String(summary || '').replace(/\.$/, '');
  return who && s.startsWith(`${who} `) ? s.slice(who.length + 1) : s;
}

/** paramsOf returns the family's parameters of a GameParams. */
export function paramsOf(gp) {
  if (!gp) return null;
  const [k] = Object.keys(gp);
  return k ? gp[k] : null;
}

/**
 * fitNarrow keeps what is under root readable on a narrow screen, now and as it changes: a
 * box that scrolls sideways (.scroll, .heatscroll) and holds more than it shows is marked
 * data-more="yes" (the style frames it and says so), and each cell of a table.stack is
 * labelled with its column's heading (a phone shows such a table's rows one under another).
 */
export function fitNarrow(root) {
  let queued = false;
  const mark = () => {
    queued = false;
    for (const box of root.querySelectorAll('.scroll, .heatscroll')) {
      const more = box.scrollWidth > box.clientWidth + 1 ? 'yes' : 'no';
      if (box.dataset.more !== more) box.dataset.more = more;
    }
    for (const table of root.querySelectorAll('table.stack')) {
      const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
      for (const row of table.querySelectorAll('tbody tr')) {
        if (row.children.length !== heads.length) continue; // a row of spanned cells says what it is
        [...row.children].forEach((cell, i) => {
          if (cell.dataset.label !== heads[i]) cell.dataset.label = heads[i];
        });
      }
    }
  };
  const later = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(mark);
  };
  new MutationObserver(later).observe(root, { childList: true, subtree: true, characterData: true });
  window.addEventListener('resize', later);
  later();
}
