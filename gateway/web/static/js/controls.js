// controls.js: what the seat page offers, computed from an observation alone (legal_moves,
// proposal_bounds, proposal_forms, message_term_forms, required_messages, choices), and the
// Action the person's input makes. Pure functions: the browser tests call them directly.

import { num } from './format.js';

export const MOVE = {
  PROPOSE: 'MOVE_KIND_PROPOSE',
  ACCEPT: 'MOVE_KIND_ACCEPT',
  REJECT: 'MOVE_KIND_REJECT',
  PASS: 'MOVE_KIND_PASS',
  CHOOSE: 'MOVE_KIND_CHOOSE',
  SAY: 'MOVE_KIND_SAY',
};

const SIDE_GIVES = 'SHARE_SIDE_GIVES';

/** normBound fills a protojson Bound's omitted zero values. */
export function normBound(b) {
  return {
    seat: num(b.seat),
    side: b.side === SIDE_GIVES ? 'gives' : 'receives',
    resource: b.resource || '',
    min: num(b.min),
    // No known upper limit (Bound.maxUnknown: another seat's hidden holdings): only min binds.
    max: b.maxUnknown ? Infinity : num(b.max),
    maxUnknown: !!b.maxUnknown,
  };
}

/** rangeText writes a bound's legal range for people: "0–25", or "0 or more" when no upper limit is known. */
export function rangeText(b) {
  return b.maxUnknown ? `${b.min} or more (no known limit)` : `${b.min}–${b.max}`;
}

/** normTotal fills a protojson AmountTotal's omitted zero values. */
export function normTotal(t) {
  return { side: t.side === SIDE_GIVES ? 'gives' : 'receives', resource: t.resource || '', total: num(t.total) };
}

/**
 * proposalForms returns the forms a proposal may take: the observation's proposal_forms, or
 * one form made of proposal_bounds when there are none. Each form is {label, bounds, totals,
 * issues} with bounds and totals normalised.
 */
export function proposalForms(obs) {
  const forms = obs.proposalForms && obs.proposalForms.length ? obs.proposalForms : [{ label: '', bounds: obs.proposalBounds || [] }];
  return forms.map(normForm);
}

/** termForms returns the forms of the non-binding terms a message may carry. */
export function termForms(obs) {
  return (obs.messageTermForms || []).map(normForm);
}

function normForm(f) {
  return {
    label: f.label || '',
    bounds: (f.bounds || []).map(normBound),
    totals: (f.totals || []).map(normTotal),
    issues: f.issues || [],
    worth: normWorth(f.worth),
  };
}

// normWorth reads a protojson Worth (what a form's proposals are worth to this seat): option
// points and points per unit received as Maps of numbers, the minimum a number or null; null
// when the form says nothing.
function normWorth(w) {
  if (!w) return null;
  const map = (m) => new Map(Object.entries(m || {}).map(([k, v]) => [k, num(v)]));
  return { options: map(w.optionPoints), units: map(w.receivedUnitPoints), minimum: w.minimum === undefined ? null : num(w.minimum) };
}

/**
 * worthOf is what a proposal of form is worth to seat me by the form's worth: the points of
 * the options picked ({issue: option}) for a deal, else the points of the units me receives
 * (amounts in the order of form.bounds). null when the form says nothing of worth.
 */
export function worthOf(form, input, me) {
  const w = form.worth;
  if (!w) return null;
  if (form.issues.length) return form.issues.reduce((sum, is) => sum + (w.options.get(input[is.id]) || 0), 0);
  return form.bounds.reduce((sum, b, i) => (b.seat === me && b.side === 'receives' && Number.isFinite(input[i]) ? sum + input[i] * (w.units.get(b.resource) || 0) : sum), 0);
}

/** worthText says what a proposal is worth to the seat, and its minimum when it has one. */
export function worthText(form, points) {
  const min = form.worth && form.worth.minimum;
  return `This proposal is worth ${points} points to you${min === null || min === undefined ? '.' : ` (your minimum is ${min}).`}`;
}

/**
 * initialAmounts proposes starting amounts for a form: amounts under a total share it as
 * evenly as their bounds allow; the others start at their minimum.
 */
export function initialAmounts(form) {
  const values = form.bounds.map((b) => b.min);
  for (const t of form.totals) {
    const idx = form.bounds.map((b, i) => [b, i]).filter(([b]) => b.side === t.side && b.resource === t.resource).map(([, i]) => i);
    if (idx.length === 0) continue;
    let left = t.total - idx.reduce((s, i) => s + values[i], 0);
    // Hand out what is left one share at a time, round-robin, within each maximum.
    let progress = true;
    while (left > 0 && progress) {
      progress = false;
      const room = idx.filter((i) => values[i] < form.bounds[i].max);
      if (room.length === 0) break;
      const each = Math.max(1, Math.floor(left / room.length));
      for (const i of room) {
        if (left <= 0) break;
        const add = Math.min(each, form.bounds[i].max - values[i], left);
        if (add > 0) {
          values[i] += add;
          left -= add;
          progress = true;
        }
      }
    }
  }
  return values;
}

/**
 * lastAmounts returns the amounts of the seat's own latest proposal that fits the form (a
 * share for every bound, each amount legal, every total met), or null: a person picks up
 * where they left off instead of starting from the minimum each turn.
 */
export function lastAmounts(form, history, me) {
  for (const h of [...(history || [])].reverse()) {
    if (h.fromReferee || num(h.seat) !== me) continue;
    const alloc = h.move && h.move.propose && h.move.propose.proposal && h.move.propose.proposal.allocation;
    if (!alloc) continue;
    const values = form.bounds.map((b) => {
      const share = (alloc.shares || []).find((sh) => num(sh.seat) === b.seat);
      const amounts = share && share[b.side];
      return amounts && b.resource in amounts ? num(amounts[b.resource]) : NaN;
    });
    if (checkAmounts(form, values).ok) return values;
  }
  return null;
}

/**
 * checkAmounts checks amounts against a form: each a whole number within its bound, and each
 * total met exactly. Returns {ok, problems: [text], sums: [{total, sum, ok}]}.
 */
export function checkAmounts(form, values) {
  const problems = [];
  form.bounds.forEach((b, i) => {
    const v = values[i];
    if (!Number.isInteger(v)) problems.push(`${b.resource}: a whole number is needed`);
    else if (v < b.min || v > b.max) problems.push(`${b.resource}: ${v} is outside ${rangeText(b)}`);
  });
  const sums = form.totals.map((t) => {
    const sum = form.bounds.reduce((s, b, i) => (b.side === t.side && b.resource === t.resource ? s + (Number.isFinite(values[i]) ? values[i] : 0) : s), 0);
    const ok = sum === t.total;
    if (!ok) problems.push(`${t.resource} ${t.side} must add up to ${t.total} (now ${sum})`);
    return { total: t, sum, ok };
  });
  return { ok: problems.length === 0, problems, sums };
}

/** buildAllocation makes the Allocation of a form's amounts: one share per seat named. */
export function buildAllocation(form, values) {
  const shares = [];
  const bySeat = new Map();
  form.bounds.forEach((b, i) => {
    let share = bySeat.get(b.seat);
    if (!share) {
      share = { seat: b.seat };
      bySeat.set(b.seat, share);
      shares.push(share);
    }
    share[b.side] = share[b.side] || {};
    share[b.side][b.resource] = String(values[i]);
  });
  return { shares };
}

/** buildDeal makes the Deal of one option picked per issue ({issueId: optionId}). */
export function buildDeal(form, picks) {
  return { choices: form.issues.map((is) => ({ issue: is.id, option: picks[is.id] || '' })) };
}

/** dealComplete says whether picks choose an option on every issue of the form. */
export function dealComplete(form, picks) {
  return form.issues.every((is) => picks[is.id]);
}

/** buildProposal makes a Proposal from a form and its input (amounts or picks). */
export function buildProposal(form, input) {
  if (form.issues.length) return { deal: buildDeal(form, input) };
  return { allocation: buildAllocation(form, input) };
}

/**
 * messageSlots returns the message boxes to offer: one per required slot ({to, required:
 * true}), or one optional public message when the game prescribes none.
 */
export function messageSlots(obs) {
  const req = obs.requiredMessages || [];
  if (req.length) return req.map((s) => ({ to: (s.to || []).map(num), required: true }));
  return [{ to: [], required: false }];
}

/**
 * buildAction makes the Action: move is {kind, proposal?, option?}; messages are
 * [{to, text, proposal?}] (optional ones with no text are left out); notes is the private
 * note to self.
 */
export function buildAction(move, messages = [], notes = '') {
  const m = {};
  switch (move.kind) {
    case MOVE.PROPOSE:
      m.propose = { proposal: move.proposal };
      break;
    case MOVE.ACCEPT:
      m.accept = {};
      break;
    case MOVE.REJECT:
      m.reject = {};
      break;
    case MOVE.PASS:
      m.pass = {};
      break;
    case MOVE.CHOOSE:
      m.choose = { option: move.option };
      break;
    case MOVE.SAY:
      m.say = {};
      break;
    default:
      throw new Error(`unknown move kind ${move.kind}`);
  }
  const action = { move: m };
  const msgs = messages
    .filter((x) => x.required || x.text.trim() !== '' || x.proposal)
    .map((x) => {
      const out = { text: x.text };
      if (x.to && x.to.length) out.to = x.to;
      if (x.proposal) out.proposal = x.proposal;
      return out;
    });
  if (msgs.length) action.messages = msgs;
  if (notes && notes.trim()) action.privateNotes = notes;
  return action;
}

/** checkMessages lists what is missing from required messages. */
export function checkMessages(messages, nameOfSeat) {
  return messages
    .filter((x) => x.required && x.text.trim() === '')
    .map((x) => `write the message to ${x.to.length ? x.to.map(nameOfSeat).join(' and ') : 'everyone'}`);
}

/** legalKinds returns the legal move kinds in the order the page shows them. */
export function legalKinds(obs) {
  const order = [MOVE.PROPOSE, MOVE.CHOOSE, MOVE.SAY, MOVE.ACCEPT, MOVE.REJECT, MOVE.PASS];
  const legal = new Set(obs.legalMoves || []);
  return order.filter((k) => legal.has(k));
}

/** remainingMs is the time left until the observation's deadline, correcting for clock skew. */
export function remainingMs(deadline, serverNow, receivedAt, now) {
  if (!deadline) return Infinity;
  const skew = serverNow ? Date.parse(serverNow) - receivedAt : 0;
  return Date.parse(deadline) - (now + skew);
}
