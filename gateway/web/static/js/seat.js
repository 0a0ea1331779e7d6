// seat.js: the human seat's page (/seat/TOKEN). It follows the seat's live stream
// (GET /api/v1/seats/TOKEN, server-sent events of snapshots), shows the briefing, the seat's
// private view, the visible history and a countdown to the deadline, and offers the legal
// moves as controls; the action goes to POST /api/v1/seats/TOKEN/action.

import { ApiError, follow } from './api.js';
import {
  buildAction,
  buildProposal,
  checkAmounts,
  checkMessages,
  dealComplete,
  initialAmounts,
  lastAmounts,
  legalKinds,
  messageSlots,
  MOVE,
  proposalForms,
  rangeText,
  remainingMs,
  termForms,
  worthOf,
  worthText,
} from './controls.js';
import {
  agentName,
  causeText,
  el,
  fill,
  fitNarrow,
  fmtClock,
  fmtNum,
  formatAllocation,
  formatProposal,
  moveWords,
  nameOf,
  num,
  recipients,
  seatNames,
} from './format.js';
import { renderEvent } from './transcript.js';
import { renderView } from './views.js';

const $ = (id) => document.getElementById(id);
const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
const api = `/api/v1/seats/${encodeURIComponent(token)}`;

const state = {
  snap: null,
  receivedAt: 0,
  formKey: '', // turn/attempt of the observation the controls were built for
  sending: false,
  matchStream: null, // closes the gateway's seat view of the match, when there is one
  matchLive: false, // whether the gateway serves the match's live transcript
  outcome: null,
  live: [], // the match's events as the gateway shows them to this seat, when it does
  issues: undefined, // a deal's issues, as the last observation that offered terms named them
};

// ---- the controls ------------------------------------------------------------------------

/** amountEditor edits the amounts of one allocation form; returns {node, read()}. */
function amountEditor(form, names, me, prefix, history) {
  const values = lastAmounts(form, history, me) || initialAmounts(form);
  const inputs = [];
  const sumCells = [];
  const preview = el('p', { class: 'preview' });
  const worth = el('p', { class: 'worth' });
  const problems = el('p', { class: 'problems' });
  const refresh = () => {
    const check = checkAmounts(form, values);
    check.sums.forEach((s, i) => {
      sumCells[i].textContent = s.ok ? `${s.sum} ✓` : `${s.sum}`;
      sumCells[i].parentElement.dataset.ok = s.ok ? 'yes' : 'no';
    });
    preview.textContent = check.ok ? formatAllocation(buildProposal(form, values).allocation, names) : '';
    if (form.worth) worth.textContent = worthText(form, worthOf(form, values, me));
    problems.textContent = check.problems.join('; ');
  };
  const rows = form.bounds.map((b, i) => {
    const input = el('input', {
      type: 'number',
      min: String(b.min),
      ...(b.maxUnknown ? {} : { max: String(b.max) }),
      step: '1',
      value: String(values[i]),
      required: true,
      dataset: { bound: String(i) },
      name: `${prefix}-amount-${i}`,
      'aria-label': `${nameOf(names, b.seat)} ${b.side} ${b.resource}`,
    });
    const slider = b.max - b.min <= 100000 ? el('input', { type: 'range', min: String(b.min), max: String(b.max), step: '1', value: String(values[i]), tabindex: '-1', 'aria-hidden': 'true' }) : null;
    const set = (v, from) => {
      values[i] = v === '' ? NaN : Number(v);
      if (from !== input) input.value = v;
      if (slider && from !== slider) slider.value = v;
      refresh();
    };
    input.addEventListener('input', () => set(input.value, input));
    if (slider) slider.addEventListener('input', () => set(slider.value, slider));
    inputs.push(input);
    const who = b.seat === me ? `${nameOf(names, b.seat)} (you)` : nameOf(names, b.seat);
    return el('tr', {}, el('th', {}, who), el('td', {}, b.side), el('td', {}, b.resource), el('td', { class: 'amount' }, input, slider), el('td', { class: 'muted small' }, rangeText(b)));
  });
  const totals = form.totals.map((t) => {
    const cell = el('td', { class: 'sum', colspan: '2' });
    sumCells.push(cell);
    return el('tr', { class: 'total' }, el('th', { colspan: '3' }, `${t.resource} ${t.side === 'gives' ? 'given' : 'received'} in all (must be ${t.total})`), cell);
  });
  const node = el(
    'div',
    { class: 'editor', dataset: { editor: prefix } },
    el('table', { class: 'grid split stack' }, el('thead', {}, el('tr', {}, el('th', {}, 'Seat'), el('th', {}, 'Side'), el('th', {}, 'Resource'), el('th', {}, 'Amount'), el('th', {}, 'Range'))), el('tbody', {}, rows, totals)),
    preview,
    form.worth ? worth : null,
    problems,
  );
  refresh();
  return {
    node,
    read() {
      const check = checkAmounts(form, values);
      return { ok: check.ok, problems: check.problems, proposal: check.ok ? buildProposal(form, values) : null };
    },
  };
}

/** dealEditor picks one option per issue; returns {node, read()}. */
function dealEditor(form, prefix) {
  const w = form.worth;
  const picks = {};
  const score = el('p', { class: 'preview' });
  const refresh = () => {
    if (!w) return;
    const total = worthOf(form, picks);
    score.textContent = worthText(form, total);
    score.dataset.ok = w.minimum === null || total >= w.minimum ? 'yes' : 'no';
  };
  const rows = form.issues.map((is) => {
    const select = el(
      'select',
      { name: `${prefix}-issue-${is.id}`, dataset: { issue: is.id } },
      (is.options || []).map((o) => el('option', { value: o.id }, `${o.id}: ${o.label || ''}${w && w.options.has(o.id) ? ` (${w.options.get(o.id)} points)` : ''}`)),
    );
    picks[is.id] = select.value;
    select.addEventListener('change', () => {
      picks[is.id] = select.value;
      refresh();
    });
    return el('label', { class: 'issue' }, el('span', {}, `${is.id}: ${is.label || ''}`), select);
  });
  refresh();
  return {
    node: el('div', { class: 'editor deal', dataset: { editor: prefix } }, rows, score),
    read() {
      const ok = dealComplete(form, picks);
      return { ok, problems: ok ? [] : ['choose an option on every issue'], proposal: ok ? buildProposal(form, picks) : null };
    },
  };
}

/** formChooser offers the forms (a select when there are several) and edits the chosen one. */
function formChooser(forms, obs, names, prefix) {
  const holder = el('div');
  let editor = null;
  const show = (i) => {
    const f = forms[i];
    editor = f.issues.length ? dealEditor(f, prefix) : amountEditor(f, names, num(obs.seat), prefix, obs.history);
    fill(holder, editor.node);
  };
  let select = null;
  if (forms.length > 1) {
    select = el(
      'select',
      { name: `${prefix}-form`, dataset: { forms: prefix } },
      forms.map((f, i) => el('option', { value: String(i) }, f.label || `form ${i + 1}`)),
    );
    select.addEventListener('change', () => show(Number(select.value)));
  }
  show(0);
  return {
    node: el('div', {}, select ? el('label', { class: 'formpick' }, 'Terms: ', select) : forms[0].label ? el('p', { class: 'muted' }, forms[0].label) : null, holder),
    read: () => editor.read(),
  };
}

/**
 * standingOffer is the proposal an accept would take, in the rules' words: the latest
 * proposal in the seat's history (a proposal replaces the ones before it), or '' when there
 * is none to accept.
 */
function standingOffer(obs) {
  if (!legalKinds(obs).includes(MOVE.ACCEPT)) return '';
  const last = (obs.history || []).findLast((h) => !h.fromReferee && h.move && h.move.propose);
  return last ? moveWords(last.summary) : '';
}

/**
 * issuesOf is what a deal's issues and options are called, from the terms the observation
 * offers (its proposal forms, or the forms of a message's terms); the last ones seen when this
 * observation offers none.
 */
function issuesOf(obs) {
  const form = [...(obs.proposalForms || []), ...(obs.messageTermForms || [])].find((f) => f.issues && f.issues.length);
  if (form) state.issues = form.issues;
  return state.issues;
}

/** buildControls fills the action form for an observation. */
function buildControls(obs) {
  const form = $('act-form');
  const names = seatNames(obs.seats);
  const me = num(obs.seat);
  const kinds = legalKinds(obs);
  const slots = messageSlots(obs);
  const tforms = termForms(obs);
  const parts = [];

  // Messages: one box per required slot, or one optional public message.
  const msgInputs = slots.map((slot, i) => {
    const text = el('textarea', { name: `message-${i}`, rows: slot.required ? '3' : '2', dataset: { message: String(i) }, placeholder: slot.required ? 'Required' : 'Optional' });
    let terms = null;
    let attach = null;
    if (tforms.length) {
      attach = el('input', { type: 'checkbox', name: `attach-${i}`, dataset: { attach: String(i) } });
      terms = formChooser(tforms, obs, names, `terms-${i}`);
      terms.node.hidden = true;
      attach.addEventListener('change', () => {
        terms.node.hidden = !attach.checked;
      });
    }
    const label = slot.required ? `Message to ${recipients(slot.to, names)}` : 'Public message (optional)';
    parts.push(
      el(
        'div',
        { class: 'message' },
        el('label', {}, el('span', { class: 'label' }, label), text),
        attach ? el('label', { class: 'attach' }, attach, ' attach an offer (binds nobody)') : null,
        terms ? terms.node : null,
      ),
    );
    return { slot, text, attach, terms };
  });
  if (slots.some((s) => s.required)) parts.unshift(el('p', { class: 'hint' }, 'This turn you must write every message below, whatever move you make.'));

  // The move controls.
  const buttons = [];
  let proposer = null;
  if (kinds.includes(MOVE.PROPOSE)) {
    proposer = formChooser(proposalForms(obs), obs, names, 'propose');
    parts.push(el('fieldset', { class: 'propose' }, el('legend', {}, 'Propose'), proposer.node, el('button', { type: 'button', class: 'primary', dataset: { kind: MOVE.PROPOSE } }, 'Propose')));
  }
  if (kinds.includes(MOVE.CHOOSE)) {
    parts.push(
      el(
        'fieldset',
        { class: 'choose' },
        el('legend', {}, 'Choose'),
        el(
          'div',
          { class: 'choices' },
          (obs.choices || []).map((c) =>
            el('button', { type: 'button', class: 'choice', dataset: { kind: MOVE.CHOOSE, option: c.id } }, el('strong', {}, c.label || c.id), c.description ? el('span', { class: 'small' }, c.description) : null),
          ),
        ),
      ),
    );
  }
  const offer = standingOffer(obs);
  for (const k of kinds) {
    if (k === MOVE.ACCEPT) buttons.push(el('button', { type: 'button', class: 'accept', dataset: { kind: k } }, 'Accept'));
    if (k === MOVE.REJECT) buttons.push(el('button', { type: 'button', class: 'reject', dataset: { kind: k } }, 'Reject'));
    if (k === MOVE.PASS) buttons.push(el('button', { type: 'button', dataset: { kind: k } }, 'Pass'));
    if (k === MOVE.SAY) buttons.push(el('button', { type: 'button', class: 'primary', dataset: { kind: k } }, 'Send'));
  }
  if (buttons.length) parts.push(el('div', { class: 'buttons' }, offer ? el('p', { class: 'offer' }, `On the table: ${offer}.`) : null, buttons));

  const notes = el('textarea', { name: 'notes', rows: '2', placeholder: 'Only you will see this, in your later turns.' });
  parts.push(el('details', { class: 'private' }, el('summary', {}, 'Private note to yourself'), notes));
  const error = el('p', { class: 'error', id: 'act-error', role: 'alert' });
  parts.push(error);
  fill(form, parts);
  form.oninput = () => {
    error.textContent = '';
  };

  form.onclick = async (e) => {
    const btn = e.target.closest('button[data-kind]');
    if (!btn || state.sending) return;
    const kind = btn.dataset.kind;
    const problems = [];
    const move = { kind };
    if (kind === MOVE.PROPOSE) {
      const r = proposer.read();
      problems.push(...r.problems);
      move.proposal = r.proposal;
    }
    if (kind === MOVE.CHOOSE) move.option = btn.dataset.option;
    const messages = msgInputs.map((m) => {
      const out = { to: m.slot.to, text: m.text.value, required: m.slot.required };
      if (m.attach && m.attach.checked) {
        const r = m.terms.read();
        problems.push(...r.problems.map((p) => `offer: ${p}`));
        out.proposal = r.proposal;
      }
      return out;
    });
    problems.push(...checkMessages(messages, (i) => nameOf(names, i)));
    if (problems.length) {
      error.textContent = `Not sent: ${problems.join('; ')}.`;
      return;
    }
    error.textContent = '';
    await submit(obs, buildAction(move, messages, notes.value));
  };
}

async function submit(obs, action) {
  state.sending = true;
  setEnabled(false);
  try {
    const resp = await fetch(`${api}/action?turn=${num(obs.turn)}&attempt=${num(obs.attempt)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(action),
    });
    if (!resp.ok) {
      let body = {};
      try {
        body = await resp.json();
      } catch {
        // not JSON
      }
      throw new ApiError(resp.status, body.code, body.message);
    }
    showNotice('Sent. Waiting for the referee…');
  } catch (err) {
    $('act-error').textContent = `Not sent: ${err.message}`;
    setEnabled(true);
  } finally {
    state.sending = false;
  }
}

function setEnabled(on) {
  for (const c of $('act-form').querySelectorAll('button, input, select, textarea')) c.disabled = !on;
}

// ---- the page ----------------------------------------------------------------------------

function showNotice(text) {
  const n = $('notice');
  n.textContent = text || '';
  n.hidden = !text;
}

function renderSeats(obs) {
  const me = num(obs.seat);
  fill(
    $('seats'),
    (obs.seats || []).map((s, i) => {
      const idx = num(s.seat ?? i);
      return el('li', { class: idx === me ? 'me' : '' }, el('strong', {}, s.name), s.role ? el('span', { class: 'muted' }, ` ${s.role}`) : null, ' · ', agentName(s), idx === me ? el('span', { class: 'tag' }, 'you') : null);
    }),
  );
}

function renderHistory(obs) {
  const names = seatNames(obs.seats);
  const me = num(obs.seat);
  const issues = issuesOf(obs);
  const items = (obs.history || []).map((h) => {
    const who = h.fromReferee ? 'Referee' : nameOf(names, h.seat) + (num(h.seat) === me ? ' (you)' : '');
    return el(
      'li',
      { class: h.fromReferee ? 'referee' : num(h.seat) === me ? 'mine' : '' },
      el('span', { class: 'turn' }, `turn ${num(h.turn)}`),
      el('span', { class: 'who' }, who),
      el('span', { class: 'summary' }, h.summary || ''),
      (h.messages || []).map((m) =>
        el(
          'div',
          { class: `msg ${m.to && m.to.length ? 'private' : 'public'}` },
          el('span', { class: 'to' }, `to ${recipients(m.to, names)}`),
          el('q', {}, m.text || ''),
          m.proposal ? el('div', { class: 'terms' }, `offer: ${formatProposal(m.proposal, names, issues)}`) : null,
        ),
      ),
    );
  });
  // Since the last observation: what the gateway's seat view of the match shows (this seat's
  // own move, the others' answers, the end), while the seat waits or once the match is over.
  if (!(state.snap && state.snap.state === 'acting')) {
    const t = num(obs.turn);
    const ctx = { names, issues };
    for (const ev of state.live) {
      const et = num(ev.turn);
      const kept = et > t || (et === t && (ev.actionTaken || ev.actionRefused || ev.agentFault || ev.proposalResolved || ev.matchEnded));
      const li = kept ? renderEvent(ev, ctx) : null;
      if (li) items.push(li);
    }
  }
  fill($('history'), items.length ? items : el('li', { class: 'muted' }, 'Nothing yet.'));
  const list = $('history');
  list.scrollTop = list.scrollHeight;
}

function renderObservation(obs) {
  document.title = `Parley · ${obs.game} · ${nameOf(seatNames(obs.seats), obs.seat)}`;
  fill(
    $('seat-title'),
    `${obs.game} · you are ${nameOf(seatNames(obs.seats), obs.seat)}`,
    obs.matchId && state.matchLive ? [' · ', el('a', { href: `/#/match/${encodeURIComponent(obs.matchId)}`, target: '_blank', rel: 'noopener' }, obs.matchId)] : null,
  );
  renderSeats(obs);
  fill($('view'), renderView(obs));
  const b = $('briefing');
  b.classList.remove('muted');
  b.textContent = obs.briefing || '';
  const notes = obs.notes || [];
  $('notes-card').hidden = notes.length === 0;
  fill($('notes'), notes.map((n) => el('li', {}, n)));
  renderHistory(obs);
}

function renderOutcome(outcome, obs) {
  const box = $('outcome');
  if (!outcome) {
    box.hidden = true;
    return;
  }
  const names = seatNames(obs && obs.seats);
  const me = obs ? num(obs.seat) : -1;
  const pay = outcome.payoffs || [];
  box.hidden = false;
  box.dataset.cause = outcome.cause || '';
  fill(
    box,
    el('h2', {}, `The match is over: ${causeText(outcome.cause)}`),
    outcome.summary ? el('p', {}, outcome.summary) : null,
    pay.length
      ? el(
          'table',
          { class: 'grid payoffs' },
          el('thead', {}, el('tr', {}, el('th', {}, 'Seat'), el('th', {}, 'Payoff'))),
          el('tbody', {}, pay.map((p, i) => el('tr', { class: i === me ? 'me' : '' }, el('td', {}, nameOf(names, i) + (i === me ? ' (you)' : '')), el('td', { class: 'num' }, fmtNum(p))))),
        )
      : null,
  );
}

/** Once the match is known, follow the gateway's seat view of it for the outcome (absent
 * under `parley play`, where the seat's own stream brings it). obs names the match and the
 * seat; what is shown is always state.snap's, the latest. */
function followMatch(obs) {
  if (state.matchStream || !obs.matchId) return;
  const url = `/api/v1/matches/${encodeURIComponent(obs.matchId)}/events?seat=${num(obs.seat)}&token=${encodeURIComponent(token)}`;
  state.matchStream = follow(url, {
    match_event: (ev) => {
      if (!ev.matchStarted) {
        state.live.push(ev);
        const cur = state.snap && state.snap.observation;
        if (cur) renderHistory(cur);
      }
      if (ev.matchEnded) {
        state.outcome = ev.matchEnded.outcome || {};
        renderOutcome(state.outcome, state.snap && state.snap.observation);
        setStatus('ended');
      }
    },
  }, (s) => {
    if (s === 'open' && !state.matchLive) {
      // The gateway serves the match: link its live transcript, on the latest observation
      // (the one followMatch was called with may be turns old by now).
      state.matchLive = true;
      const cur = state.snap && state.snap.observation;
      if (cur) renderObservation(cur);
    }
    if (s === 'failed' || s === 'reconnecting') {
      // No gateway here (parley play), or the stream failed: the seat's stream suffices.
      if (state.matchStream) state.matchStream();
    }
  });
}

function tick() {
  const snap = state.snap;
  const clock = $('clock');
  const obs = snap && snap.observation;
  if (!snap || snap.state !== 'acting' || !obs || !obs.deadline) {
    clock.hidden = true;
    return;
  }
  const left = remainingMs(obs.deadline, snap.now, state.receivedAt, Date.now());
  clock.hidden = false;
  clock.textContent = left > 0 ? `${fmtClock(left)} left` : 'time is up';
  clock.dataset.urgent = left < 10000 ? 'yes' : 'no';
  if (left <= 0) setEnabled(false);
}

function setStatus(kind, text) {
  const s = $('status');
  s.dataset.state = kind;
  const obs = state.snap && state.snap.observation;
  let msg = text;
  if (!msg) {
    if (kind === 'acting') {
      msg = `Your turn${obs && obs.phase ? ` (${obs.phase})` : ''}: turn ${num(obs && obs.turn)}${obs && obs.maxTurns ? ` of ${num(obs.maxTurns)}` : ''}${num(obs && obs.attempt) > 1 ? `, attempt ${num(obs.attempt)}` : ''}.`;
    } else if (kind === 'ended') {
      const o = state.outcome;
      const me = obs ? num(obs.seat) : -1;
      const mine = o && o.payoffs && me >= 0 && o.payoffs[me] !== undefined ? ` You get ${fmtNum(o.payoffs[me])}.` : '';
      msg = o ? `The match is over: ${causeText(o.cause).toLowerCase()}.${mine}` : 'The match is over.';
    } else {
      msg = obs ? 'Waiting for the other players…' : 'Waiting for the match to reach you…';
    }
  }
  $('status-text').textContent = msg;
}

function onSnapshot(snap) {
  state.snap = snap;
  state.receivedAt = Date.now();
  const obs = snap.observation;
  if (obs) {
    renderObservation(obs);
    followMatch(obs);
  }
  const rej = $('rejection');
  const acting = snap.state === 'acting' && obs;
  if (acting && obs.lastRejection) {
    rej.hidden = false;
    fill(rej, el('strong', {}, 'Your last action was refused: '), obs.lastRejection.message || obs.lastRejection.code || '');
  } else {
    rej.hidden = true;
  }
  showNotice(snap.state === 'ended' ? '' : snap.note || '');
  if (acting) {
    const key = `${num(obs.turn)}/${num(obs.attempt)}`;
    if (key !== state.formKey) {
      state.formKey = key;
      buildControls(obs);
    }
    $('act').hidden = false;
    setEnabled(true);
  } else {
    $('act').hidden = true;
    state.formKey = '';
  }
  if (snap.outcome) state.outcome = snap.outcome;
  renderOutcome(state.outcome, obs);
  setStatus(snap.state === 'ended' || state.outcome ? 'ended' : snap.state);
  if (snap.state === 'ended' && !state.outcome) setStatus('ended', 'The match is over.');
  tick();
}

function start() {
  if (!token) {
    setStatus('ended', 'No seat in this address.');
    return;
  }
  const conn = $('conn');
  const label = { open: 'connected', reconnecting: 'reconnecting…', failed: 'disconnected', closed: 'match over' };
  let close = null;
  close = follow(
    api,
    {
      seat: (snap) => {
        onSnapshot(snap);
        // The server ends the stream after the final state; do not reconnect.
        if (snap.state === 'ended' && close) close();
      },
    },
    (s) => {
      conn.dataset.state = s;
      conn.textContent = label[s] || s;
      if (s === 'failed' && !state.snap) setStatus('ended', 'This seat does not exist: the link is wrong, or its match ended long ago.');
    },
  );
  setInterval(tick, 250);
}

fitNarrow(document.querySelector('main'));
start();
