// Example Parley bot in TypeScript: plays the multi-turn ultimatum game and the n-player
// coalition game, and any other game legally (if simply) from the observation's generic hints.
//
//   node agents/typescript/dist/examples/bot.js --listen 127.0.0.1:50071     # serve over gRPC
//   PARLEY_TOKEN=... node agents/typescript/dist/examples/bot.js --dial-out http://127.0.0.1:8080 --bot mybot
//
// Strategy (deterministic; it keeps no state between calls):
//   ultimatum  accept an offer worth at least a threshold falling from 40% of the pot to
//              "anything positive" on its last chance; otherwise ask for ~60%, conceding toward
//              50% as its turns run out (never more than it asked before: it reads its own asks
//              back from its private notes); on the last turn accept anything positive.
//   coalition  values every seat by the Shapley value of the game (each player's average
//              contribution), rounded to whole units. Phase 1: exactly one message per required
//              slot, each offering that split of the grand coalition (when offers are allowed).
//              Phase 2: proposes the grand coalition's split, asking less for itself (and giving
//              the difference to the others) as proposals run out; votes yes when the pending
//              proposal gives it at least its threshold: 90% of its Shapley share, falling to
//              nothing on the last proposal (when rejecting leaves everyone with nothing).
//   otherwise, and after a refused action: the simplest legal move.

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  ACCEPT,
  type Action,
  type Agent,
  CHOOSE,
  type Observation,
  PASS,
  PROPOSE,
  type ProposalForm,
  REJECT,
  RejectionCode,
  SAY,
  ShareSide,
  accept,
  action,
  amount,
  amountFor,
  choose,
  clamp,
  coalitionv1,
  fillForm,
  findBound,
  formSeats,
  isLegal,
  pass,
  proposeAllocation,
  proposeAmount,
  proposeUltimatum,
  reject,
  run,
  say,
  sayOnly,
  standingProposalTurn,
  type Message,
  type Move,
} from "../src/index.js";

// Defaults of parley.games.ultimatum.v1.Params, for unset fields.
const DEFAULT_TOTAL = 100;
const DEFAULT_MAX_TURNS = 8;
const DEFAULT_CURRENCY = "Dollars";

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);

export class ExampleBot implements Agent {
  name = "ts-example";
  version = "0.1.0";
  author = "Parley examples";
  games = ["ultimatum", "coalition"];
  description = "TypeScript example: a steady conceder in the ultimatum game; offers and proposes the Shapley split in the coalition game, conceding as proposals run out.";

  act(obs: Observation): Action {
    if (obs.lastRejection) {
      const r = obs.lastRejection;
      return fallback(obs, `my previous attempt was refused (${RejectionCode[r.code]}: ${r.message})`);
    }
    switch (obs.view.case) {
      case "ultimatum":
        return ultimatum(obs);
      case "coalition":
        return coalition(obs, obs.view.value);
      default:
        return fallback(obs, `no strategy for ${obs.game || "this game"}`);
    }
  }
}

// --- Ultimatum --------------------------------------------------------------------------------

function ultimatumParams(obs: Observation) {
  const p = obs.view.case === "ultimatum" ? obs.view.value.params : undefined;
  return {
    total: p?.total !== undefined ? amount(p.total) : DEFAULT_TOTAL,
    maxTurns: p?.maxTurns ?? (obs.maxTurns || DEFAULT_MAX_TURNS),
    currency: p?.currency ?? DEFAULT_CURRENCY,
  };
}

function ultimatum(obs: Observation): Action {
  if (obs.view.case !== "ultimatum") throw new Error("unreachable");
  const view = obs.view.value;
  const { total, maxTurns, currency } = ultimatumParams(obs);
  const me = obs.seat; // 0 = P1 (holds the money), 1 = P2
  const mine = (x: number) => (me === 1 ? x : total - x); // x is always what P2 gets

  // Seats alternate, so this seat acts again every second turn.
  const horizon = Math.max(1, Math.floor((maxTurns - 1) / 2)); // most turns I could have after my first
  const later = Math.min(Math.floor(view.turnsLeft / 2), horizon); // my turns after this one
  const threshold = Math.max(1, ceilDiv(4 * total * later, 10 * horizon)); // 40% .. 1
  let ask = ceilDiv(total * (50 * horizon + 10 * later), 100 * horizon); // 60% .. 50%
  const previous = previousAsk(obs);
  if (previous !== undefined) ask = Math.min(ask, previous);

  const offer = view.standingOffer !== undefined ? mine(amount(view.standingOffer)) : undefined;
  const situation = `turn ${obs.turn} of ${maxTurns}, ${view.turnsLeft} left (${later} more for me); offer to me: ${offer ?? "none"}; I accept ${threshold}+, I'd ask ${ask}`;

  if (isLegal(obs, ACCEPT) && offer !== undefined && offer >= threshold) {
    return act(obs, accept(standingProposalTurn(obs, view.standingProposer)), `Deal. ${offer} ${currency} for me works.`, {
      reasoning: `${situation} -> accept`,
      notes: `turn ${obs.turn}: accepted ${offer}`,
    });
  }
  if (isLegal(obs, PROPOSE)) {
    const [move, x] = ultimatumProposal(obs, me === 1 ? ask : total - ask, currency);
    return act(obs, move, `I propose ${x} ${currency} for P2 and ${total - x} for P1.`, {
      reasoning: `${situation} -> propose ${x} for P2 (${mine(x)} for me)`,
      notes: `turn ${obs.turn}: asked for ${mine(x)}`,
    });
  }
  if (isLegal(obs, ACCEPT) && offer !== undefined && offer > 0) {
    return act(obs, accept(), `Something beats nothing: I accept ${offer} ${currency}.`, {
      reasoning: `${situation} -> no proposal possible, accept a positive offer`,
    });
  }
  if (isLegal(obs, REJECT)) {
    return act(obs, reject(), "An offer of nothing is no deal. I reject.", { reasoning: `${situation} -> nothing to accept, reject` });
  }
  return fallback(obs, `${situation}; no planned move is legal`);
}

/** The share this seat last asked for, read back from its own notes (newest first). */
function previousAsk(obs: Observation): number | undefined {
  for (let i = obs.notes.length - 1; i >= 0; i--) {
    const m = /asked for (\d+)/.exec(obs.notes[i]);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** A proposal giving P2 about x, kept inside the observation's bounds; and the x proposed. */
function ultimatumProposal(obs: Observation, x: number, currency: string): [Move, number] {
  const bound = findBound(obs, { seat: 0, side: ShareSide.GIVES }) ?? findBound(obs);
  if (!bound) return [proposeUltimatum(x, currency), x];
  const y = clamp(bound, x);
  return [proposeAmount(bound, y, obs), y];
}

// --- Coalition --------------------------------------------------------------------------------

function coalition(obs: Observation, view: coalitionv1.View): Action {
  const me = obs.seat;
  const n = view.players.length;
  const split = shapleySplit(view);
  const fair = view.players.map((p, i) => `${p} ${split[i]}`).join(", ");
  const unit = view.unit;
  const grandValue = split.reduce((a, b) => a + b, 0);

  if (isLegal(obs, SAY)) {
    // Exactly one message per required slot, addressed exactly as the slot says.
    const form = grandForm(obs.messageTermForms);
    const terms = form ? fillForm(form, split) : undefined;
    const text = `Let's share the ${grandValue} ${unit} of all of us by what each adds on average (the Shapley value): ${fair}.`;
    return action(sayOnly(), ...obs.requiredMessages.map((slot) => say(text, slot, terms)), {
      reasoning: `Shapley split ${fair}; offering it to everyone`,
    });
  }

  if (isLegal(obs, PROPOSE)) {
    const form = grandForm(obs.proposalForms);
    if (!form) return fallback(obs, "no proposal form");
    // Concede: ask for 100% of my Shapley share on the first proposal, down to 60% on the last,
    // and hand the difference to the other members.
    const progress = view.maxProposals > 1 ? view.proposalsMade / (view.maxProposals - 1) : 1;
    const ask = Math.floor(split[me] * (1 - 0.4 * Math.min(1, progress)));
    const others = formSeats(form).filter((s) => s !== me);
    const bonus = others.length > 0 ? Math.floor((split[me] - ask) / others.length) : 0;
    const want: Record<number, number> = { [me]: ask };
    for (const s of others) want[s] = split[s] + bonus;
    const alloc = fillForm(form, want);
    const shares = alloc.shares.map((sh) => `${view.players[sh.seat] ?? sh.seat} ${amount(sh.receives[unit])}`).join(", ");
    return act(obs, proposeAllocation(alloc), `My proposal: ${shares} ${unit}.`, {
      reasoning: `Shapley split ${fair}; proposal ${view.proposalsMade + 1} of ${view.maxProposals}: I ask ${ask}`,
    });
  }

  if (isLegal(obs, ACCEPT) || isLegal(obs, REJECT)) {
    const mine = amountFor(view.pending, me, unit);
    const last = view.proposalsMade >= view.maxProposals;
    const alone = coalitionValue(view, [me]);
    const progress = view.maxProposals > 1 ? Math.min(1, Math.max(0, (view.proposalsMade - 1) / (view.maxProposals - 1))) : 1;
    const threshold = last ? 0 : Math.max(alone, Math.ceil(0.9 * split[me] * (1 - progress)));
    const why = `the proposal gives me ${mine} ${unit}; I accept ${threshold}+ (Shapley share ${split[me]}, proposal ${view.proposalsMade} of ${view.maxProposals})`;
    if ((mine >= threshold && isLegal(obs, ACCEPT)) || !isLegal(obs, REJECT)) {
      return act(obs, accept(), `I accept ${mine} ${unit}.`, { reasoning: `${why} -> accept` });
    }
    return act(obs, reject(), `I reject: ${mine} ${unit} is too little for me; I'd take ${threshold}.`, { reasoning: `${why} -> reject` });
  }
  return fallback(obs, `nothing planned is legal (seat ${me} of ${n})`);
}

/** The value of the coalition of exactly these seats (0 when not listed). */
function coalitionValue(view: coalitionv1.View, seats: number[]): number {
  const key = [...seats].sort((a, b) => a - b).join(",");
  const cv = view.values.find((v) => [...v.members].sort((a, b) => a - b).join(",") === key);
  return cv ? amount(cv.value) : 0;
}

/**
 * The Shapley value of the game in the view, rounded to whole units adding up to the grand
 * coalition's value (largest remainders, ties to the lower seat).
 */
export function shapleySplit(view: coalitionv1.View): number[] {
  const n = view.players.length;
  const v = new Map<number, number>();
  for (const cv of view.values) v.set(cv.members.reduce((m, s) => m | (1 << s), 0), amount(cv.value));
  const worth = (mask: number) => v.get(mask) ?? 0;
  const fact = [1];
  for (let i = 1; i <= n; i++) fact.push(fact[i - 1] * i);
  const phi = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let s = 0; s < 1 << n; s++) {
      if (s & (1 << i)) continue;
      const size = popcount(s);
      phi[i] += ((fact[size] * fact[n - size - 1]) / fact[n]) * (worth(s | (1 << i)) - worth(s));
    }
  }
  const total = worth((1 << n) - 1);
  const floor = phi.map((x) => Math.floor(x + 1e-9));
  let left = total - floor.reduce((a, b) => a + b, 0);
  const order = phi.map((x, i) => ({ i, r: x - Math.floor(x + 1e-9) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let k = 0; left > 0 && k < order.length; k++, left--) floor[order[k].i]++;
  return floor.map((x) => Math.max(0, x));
}

function popcount(x: number): number {
  let c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}

/** The form naming the most seats (the grand coalition), the larger total on a tie. */
function grandForm(forms: readonly ProposalForm[]): ProposalForm | undefined {
  const total = (f: ProposalForm) => f.totals.reduce((a, t) => a + amount(t.total), 0);
  return [...forms].sort((a, b) => formSeats(b).length - formSeats(a).length || total(b) - total(a))[0];
}

// --- Any game ---------------------------------------------------------------------------------

/**
 * An action with text: one message per required slot when the game prescribes messages (and
 * then nothing else), else one public message.
 */
function act(obs: Observation, move: Move, text: string, extras: { reasoning?: string; notes?: string }): Action {
  const messages: Message[] = obs.requiredMessages.length > 0 ? obs.requiredMessages.map((slot) => say(text, slot)) : [say(text)];
  return action(move, ...messages, extras);
}

/** The simplest legal move, from the generic hints alone. */
function fallback(obs: Observation, why: string): Action {
  const extras = { reasoning: `${why} -> fallback`, notes: `turn ${obs.turn}: fallback` };
  if (isLegal(obs, SAY)) return act(obs, sayOnly(), "Hello.", extras);
  if (isLegal(obs, ACCEPT)) return act(obs, accept(), "I accept.", extras);
  if (isLegal(obs, PROPOSE)) {
    const form = obs.proposalForms[0];
    if (form && form.issues.length === 0) return act(obs, proposeAllocation(fillForm(form, (b) => b.min)), "My proposal.", extras);
    const bound = findBound(obs);
    if (!form && bound && obs.view.case === "ultimatum") {
      const { total } = ultimatumParams(obs);
      return act(obs, proposeAmount(bound, clamp(bound, Math.floor(total / 2)), obs), "Half each.", extras);
    }
    if (!form && bound) return act(obs, proposeAmount(bound, bound.min, obs), "My proposal.", extras);
  }
  if (isLegal(obs, REJECT)) return act(obs, reject(), "I reject.", extras);
  if (isLegal(obs, CHOOSE) && obs.choices.length > 0 && !isLegal(obs, PASS)) return act(obs, choose(obs.choices[0].id), "My choice.", extras);
  return act(obs, pass(), "I pass.", extras);
}

// Run as a program (not when imported by a test).
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run(new ExampleBot(), { program: "bot.js", defaultListen: "127.0.0.1:50071" });
}
