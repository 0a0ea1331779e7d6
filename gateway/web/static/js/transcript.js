// transcript.js: a match's events (parley.events.v1.MatchEvent, protojson, as the gateway's
// stream sends them after redaction) rendered for people.

import { agentName, causeText, describeMove, el, fmtNum, formatProposal, moveWords, nameOf, num, paramsOf, recipients } from './format.js';

const faultKinds = {
  FAULT_KIND_UNAVAILABLE: 'could not be reached',
  FAULT_KIND_MALFORMED: 'sent a reply that could not be read',
  FAULT_KIND_OVERSIZED: 'sent a reply that was too large',
  FAULT_KIND_ERROR: 'answered with an error',
  FAULT_KIND_RETRIES_EXHAUSTED: 'had too many actions refused',
};

/** seatTable lists the seats of a match with their agents. */
export function seatTable(seats) {
  // Games whose seats have no roles (coalition, deliberation) get no empty column.
  const roles = (seats || []).some((s) => s.role);
  return el(
    'table',
    { class: 'grid small seats-table' },
    el('thead', {}, el('tr', {}, ['Seat', roles ? 'Role' : null, 'Agent', 'About'].filter(Boolean).map((h) => el('th', {}, h)))),
    el(
      'tbody',
      {},
      (seats || []).map((s) =>
        el('tr', {}, el('td', {}, el('strong', {}, s.name)), roles ? el('td', {}, s.role || '') : null, el('td', {}, agentName(s), s.label && s.agent ? el('div', { class: 'small muted' }, `${s.agent.name}${s.agent.version ? ` ${s.agent.version}` : ''}`) : null), el('td', { class: 'small muted' }, (s.agent && s.agent.description) || '')),
      ),
    ),
  );
}

function messages(msgs, ctx) {
  return (msgs || []).map((m) =>
    el(
      'div',
      { class: `msg ${m.to && m.to.length ? 'private' : 'public'}` },
      el('span', { class: 'to' }, `to ${recipients(m.to, ctx.names)}`),
      el('q', {}, m.text || ''),
      m.proposal ? el('div', { class: 'terms' }, `offer: ${formatProposal(m.proposal, ctx.names, ctx.issues)}`) : null,
    ),
  );
}

function line(cls, turn, who, summary, ...rest) {
  // The spaces keep copied text (and innerText) readable: "turn 1 P1 proposes: …".
  return el('li', { class: cls }, el('span', { class: 'turn' }, turn ? `turn ${turn}` : ''), ' ', who ? [el('span', { class: 'who' }, who), ' '] : null, el('span', { class: 'summary' }, summary), rest);
}

/** renderEvent renders one event as a transcript line (null for MatchStarted). */
export function renderEvent(ev, ctx) {
  const turn = num(ev.turn);
  if (ev.matchStarted) {
    // A deal's issues, where the game's parameters list them, name the options of offers.
    const p = paramsOf(ev.matchStarted.params);
    if (p && Array.isArray(p.issues)) ctx.issues = p.issues;
    return line('ev-start', 0, '', `The match begins: ${(ev.matchStarted.seats || []).map((s) => `${s.name} is ${agentName(s)}`).join(', ')}.`);
  }
  if (ev.phaseStarted) return line('ev-phase', turn, 'Referee', ev.phaseStarted.summary || `Phase ${ev.phaseStarted.phase}`);
  if (ev.chanceDrawn) {
    const c = ev.chanceDrawn;
    const text = c.summary || `A draw of ${c.what || 'something'}${c.visibleTo && c.visibleTo.length ? `, seen only by ${c.visibleTo.map((i) => nameOf(ctx.names, i)).join(' and ')}` : ''}.`;
    return line('ev-chance', turn, 'Chance', text);
  }
  if (ev.actionTaken) {
    const a = ev.actionTaken;
    const act = a.action || {};
    const who = nameOf(ctx.names, a.seat);
    const hiddenTalk = act.move && act.move.say && !(act.messages || []).length;
    let words = describeMove(act.move, ctx.names, ctx.issues);
    if (a.summary) words = moveWords(a.summary, who);
    else if (hiddenTalk) words = 'speaks in private (hidden from spectators)';
    return line(
      'ev-action',
      turn,
      who,
      words,
      a.defaultReason ? el('span', { class: 'default' }, `(default move: ${a.defaultReason})`) : null,
      messages(act.messages, ctx),
      act.privateReasoning ? el('details', { class: 'reasoning' }, el('summary', {}, 'private reasoning'), el('div', { class: 'pre' }, act.privateReasoning)) : null,
      act.privateNotes ? el('details', { class: 'reasoning' }, el('summary', {}, 'private notes'), el('div', { class: 'pre' }, act.privateNotes)) : null,
    );
  }
  if (ev.actionRefused) {
    const r = ev.actionRefused;
    const rej = r.rejection || {};
    return line('ev-refused', turn, nameOf(ctx.names, r.seat), `had an action refused${rej.message ? `: ${rej.message}` : ` (${(rej.code || '').replace('REJECTION_CODE_', '').toLowerCase().replace(/_/g, ' ')})`}`, r.action ? messages(r.action.messages, ctx) : null);
  }
  if (ev.agentFault) {
    const f = ev.agentFault;
    // A seat whose time ran out, a person's or a program's, is told so in words.
    if (f.kind === 'FAULT_KIND_TIMEOUT') return line('ev-fault', turn, nameOf(ctx.names, f.seat), `ran out of time: ${f.detail || 'no answer within the time a move allows'}; the default move is played.`);
    return line('ev-fault', turn, nameOf(ctx.names, f.seat), `'s agent ${faultKinds[f.kind] || 'failed'}${f.detail ? ` (${f.detail})` : ''}`);
  }
  if (ev.proposalResolved) {
    const r = ev.proposalResolved;
    const yes = (r.acceptedBy || []).map((i) => nameOf(ctx.names, i));
    const no = (r.rejectedBy || []).map((i) => nameOf(ctx.names, i));
    return line(
      'ev-vote',
      turn,
      'Vote',
      r.summary || `${nameOf(ctx.names, r.proposer)}'s proposal (${formatProposal(r.proposal, ctx.names, ctx.issues)}) ${r.accepted ? 'passes' : 'fails'}`,
      el('div', { class: 'small sub' }, el('span', { class: 'vote-yes' }, `for: ${yes.join(', ') || 'nobody'}`), ' · ', el('span', { class: 'vote-no' }, `against: ${no.join(', ') || 'nobody'}`)),
    );
  }
  if (ev.matchEnded) {
    const o = ev.matchEnded.outcome || {};
    return line('ev-end', turn, 'Referee', `The match ends: ${causeText(o.cause).toLowerCase()}.`);
  }
  return null;
}

/** renderOutcome renders how a match ended, with the payoffs. */
export function renderOutcome(o, names) {
  const faulted = new Set((o.faultedSeats || []).map(num));
  return [
    el('h2', {}, `Outcome: ${causeText(o.cause)}`),
    o.summary ? el('p', {}, o.summary) : null,
    (o.payoffs || []).length
      ? el(
          'table',
          { class: 'grid payoffs', id: 'payoffs' },
          el('thead', {}, el('tr', {}, el('th', {}, 'Seat'), el('th', { class: 'num' }, 'Payoff'), el('th', {}, ''))),
          el('tbody', {}, o.payoffs.map((p, i) => el('tr', {}, el('td', {}, nameOf(names, i)), el('td', { class: 'num' }, fmtNum(p)), el('td', { class: 'small' }, faulted.has(i) ? 'faulted' : '')))),
        )
      : el('p', { class: 'muted' }, 'No payoffs: the match is void.'),
  ];
}

/**
 * WaitingSeats keeps whom a live match waits for: each seat's latest ask (a
 * parley.referee.v1.Waiting from the stream's 'waiting' events) until an event of that seat
 * answers it. Asks and events may come in either order (an ask is live news, events are
 * stored first): an ask already answered is not taken.
 */
export class WaitingSeats {
  constructor() {
    this.asks = new Map(); // seat -> Waiting
    this.answered = new Map(); // seat -> {turn, attempt, final}
  }

  /** ask takes a Waiting. */
  ask(w) {
    const seat = num(w.seat);
    if (covers(this.answered.get(seat), w)) return;
    const old = this.asks.get(seat);
    if (!old || num(old.turn) < num(w.turn) || (num(old.turn) === num(w.turn) && num(old.attempt) <= num(w.attempt))) this.asks.set(seat, w);
  }

  /** answer takes a match event: a seat's action, refusal or fault answers its asks so far. */
  answer(ev) {
    const a = ev.actionTaken || ev.actionRefused || ev.agentFault;
    if (ev.matchEnded) {
      this.asks.clear();
      return;
    }
    if (!a) return;
    const seat = num(a.seat);
    const mark = { turn: num(ev.turn), attempt: num(a.attempt), final: !!ev.actionTaken };
    const old = this.answered.get(seat);
    if (!old || mark.turn > old.turn || (mark.turn === old.turn && (mark.final || mark.attempt >= old.attempt))) this.answered.set(seat, mark);
    const w = this.asks.get(seat);
    if (w && covers(this.answered.get(seat), w)) this.asks.delete(seat);
  }

  /** open lists the asks not yet answered, in seat order. */
  open() {
    return [...this.asks.entries()].sort((a, b) => a[0] - b[0]).map(([, w]) => w);
  }
}

// covers says whether an answer (turn, attempt, final) answers the ask w.
function covers(ans, w) {
  if (!ans) return false;
  return ans.turn > num(w.turn) || (ans.turn === num(w.turn) && (ans.final || ans.attempt >= num(w.attempt)));
}
