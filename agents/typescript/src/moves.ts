// Small builders for moves, messages and actions, and readers of the observation's generic hints
// (legal moves, bounds, proposal forms with their totals), so an agent's act() stays short.
//
// Every builder returns a generated protobuf message (parley.game.v1 / parley.agent.v1). Nothing
// here checks legality, which is the referee's job: a refused move comes back to the agent in
// Observation.lastRejection. Amounts are int64 in the contract, so protobuf-es gives them as
// bigint; the builders take a number or a bigint, and amount() reads one back as a number.

import { create } from "@bufbuild/protobuf";
import { type Action, ActionSchema, type Observation, type Usage, UsageSchema } from "./gen/parley/agent/v1/agent_pb.js";
import {
  type Allocation,
  AllocationSchema,
  type Bound,
  type Message,
  MessageSchema,
  type MessageSlot,
  type Move,
  MoveKind,
  MoveSchema,
  type Proposal,
  type ProposalForm,
  ProposalSchema,
  type SeatShare,
  SeatShareSchema,
  ShareSide,
} from "./gen/parley/game/v1/game_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";

/** An amount as the builders take it: a safe integer or a bigint. */
export type Amount = number | bigint;

/** Move kinds, as listed in Observation.legalMoves. */
export const PROPOSE = MoveKind.PROPOSE;
export const ACCEPT = MoveKind.ACCEPT;
export const REJECT = MoveKind.REJECT;
export const PASS = MoveKind.PASS;
export const CHOOSE = MoveKind.CHOOSE;
export const SAY = MoveKind.SAY;

/** An int64 amount as a bigint; a number is truncated toward zero. */
export function big(x: Amount): bigint {
  if (typeof x === "bigint") return x;
  if (!Number.isFinite(x)) throw new RangeError(`parley: amount ${x} is not a finite number`);
  return BigInt(Math.trunc(x));
}

/** An int64 amount as a number (undefined reads as 0). Exact up to 2^53. */
export function amount(x: Amount | undefined): number {
  return x === undefined ? 0 : Number(x);
}

/** Whether a move of this kind (e.g. ACCEPT) is legal in the observation. */
export function isLegal(obs: Observation, kind: MoveKind): boolean {
  return obs.legalMoves.includes(kind);
}

// --- Moves ----------------------------------------------------------------------------------

/** One seat's part of an Allocation: what it hands over and what it takes, by resource. */
export function share(seat: number, parts: { gives?: Record<string, Amount>; receives?: Record<string, Amount> } = {}): SeatShare {
  return create(SeatShareSchema, { seat, gives: bigMap(parts.gives), receives: bigMap(parts.receives) });
}

/** An Allocation of the given shares (at most one per seat). */
export function allocation(...shares: SeatShare[]): Allocation {
  return create(AllocationSchema, { shares });
}

/** Terms: an Allocation as a Proposal (for a propose move or a message's attached terms). */
export function allocationTerms(alloc: Allocation | SeatShare[]): Proposal {
  const a = Array.isArray(alloc) ? allocation(...alloc) : alloc;
  return create(ProposalSchema, { terms: { case: "allocation", value: a } });
}

/** A proposal move whose terms are an Allocation (or the Allocation of the given shares). */
export function proposeAllocation(alloc: Allocation | SeatShare[]): Move {
  return proposeTerms(allocationTerms(alloc));
}

/** A proposal move with any terms (an Allocation or a Deal). */
export function proposeTerms(terms: Proposal): Move {
  return create(MoveSchema, { kind: { case: "propose", value: { proposal: terms } } });
}

/**
 * Ultimatum proposal: P1 (seat 0) gives x of its money to P2; P2's side stays empty. Whichever
 * seat proposes, x is always the amount P2 ends up with. Pass the game's currency
 * (view.params.currency) when it is not the default.
 */
export function proposeUltimatum(x: Amount, currency = "Dollars"): Move {
  return proposeAllocation([share(0, { gives: { [currency]: x } })]);
}

/**
 * A proposal filling the one amount a Bound describes (its seat, side, resource). Given the
 * observation (or its bounds), it also carries every amount they fix (min = max, e.g. the
 * seller's 1 item in buysell): the referee fills in nothing, and refuses a proposal that leaves
 * out an amount the rules require.
 */
export function proposeAmount(bound: Bound, x: Amount, from?: Observation | readonly Bound[]): Move {
  const bounds = from === undefined ? [] : Array.isArray(from) ? (from as readonly Bound[]) : (from as Observation).proposalBounds;
  const bySeat = new Map<number, SeatShare>();
  const put = (b: Bound, v: Amount) => {
    let sh = bySeat.get(b.seat);
    if (!sh) {
      sh = share(b.seat);
      bySeat.set(b.seat, sh);
    }
    (b.side === ShareSide.RECEIVES ? sh.receives : sh.gives)[b.resource] = big(v);
  };
  for (const b of bounds) if (b.min === b.max) put(b, b.min);
  put(bound, x);
  return proposeAllocation([...bySeat.values()].sort((a, b) => a.seat - b.seat));
}

/**
 * Accept the standing proposal. A non-zero proposalTurn makes the referee refuse the accept if
 * the standing proposal is not the one made on that turn (a stale observation).
 */
export function accept(proposalTurn = 0): Move {
  return create(MoveSchema, { kind: { case: "accept", value: { proposalTurn } } });
}

/** Reject: end the negotiation, or vote no, as the game says. */
export function reject(): Move {
  return create(MoveSchema, { kind: { case: "reject", value: {} } });
}

/** No game move this turn; messages may still be sent. */
export function pass(): Move {
  return create(MoveSchema, { kind: { case: "pass", value: {} } });
}

/** A talk-only turn: the action's messages are the turn (see Observation.requiredMessages). */
export function sayOnly(): Move {
  return create(MoveSchema, { kind: { case: "say", value: {} } });
}

/** Pick the option with this id (one of Observation.choices). */
export function choose(option: string): Move {
  return create(MoveSchema, { kind: { case: "choose", value: { option } } });
}

// --- Messages and the action ------------------------------------------------------------------

/**
 * A message. `to` undefined (or empty) is public, to every other seat; otherwise a seat or a
 * list of seats, who alone (with the sender) will read it. `terms` attaches a non-binding offer
 * (an Allocation or a Proposal), where the game takes one (Observation.messageTermForms).
 */
export function say(text: string, to?: number | readonly number[] | MessageSlot, terms?: Allocation | Proposal): Message {
  let recipients: number[];
  if (to === undefined) recipients = [];
  else if (typeof to === "number") recipients = [to];
  else if ("$typeName" in to) recipients = [...to.to];
  else recipients = [...to];
  const m = create(MessageSchema, { to: recipients, text });
  if (terms !== undefined) m.proposal = terms.$typeName === "parley.game.v1.Allocation" ? allocationTerms(terms) : terms;
  return m;
}

/** The private parts of an Action, given to action() after the messages. */
export interface ActionExtras {
  /** Kept in the record only: never sent to another seat. */
  reasoning?: string;
  /** A note to this seat's future self, returned in later observations (Observation.notes). */
  notes?: string;
  /** Resource use (language-model agents). */
  usage?: Usage | MessageInitShape<typeof UsageSchema>;
}

/**
 * The Action an act() returns: a move, any messages, and optionally (last) the private
 * reasoning and notes: action(accept(), say("Deal."), { reasoning: "at least half" }).
 */
export function action(move: Move, ...parts: Array<Message | ActionExtras>): Action {
  const a = create(ActionSchema, { move });
  for (const p of parts) {
    if ("$typeName" in p && p.$typeName === "parley.game.v1.Message") {
      a.messages.push(p);
      continue;
    }
    const x = p as ActionExtras;
    if (x.reasoning !== undefined) a.privateReasoning = x.reasoning;
    if (x.notes !== undefined) a.privateNotes = x.notes;
    if (x.usage !== undefined) a.usage = create(UsageSchema, x.usage as MessageInitShape<typeof UsageSchema>);
  }
  return a;
}

// --- Reading the observation ------------------------------------------------------------------

/** The first of obs.proposalBounds (or of the given bounds) matching every criterion given. */
export function findBound(
  obs: Observation | readonly Bound[],
  want: { seat?: number; side?: ShareSide; resource?: string } = {},
): Bound | undefined {
  const bounds = Array.isArray(obs) ? (obs as readonly Bound[]) : (obs as Observation).proposalBounds;
  return bounds.find(
    (b) =>
      (want.seat === undefined || b.seat === want.seat) &&
      (want.side === undefined || b.side === want.side) &&
      (want.resource === undefined || b.resource === want.resource),
  );
}

/**
 * value moved into [bound.min, bound.max], as a number; into [bound.min, ...) when
 * bound.maxUnknown says no upper limit is known (another seat's hidden holdings: the referee
 * refuses too much).
 */
export function clamp(bound: Bound, value: Amount): number {
  const v = Math.max(amount(bound.min), amount(value));
  return bound.maxUnknown ? v : Math.min(amount(bound.max), v);
}

/**
 * Turn of the latest proposal in the visible history made by another seat (or by seat `by`),
 * for accept(proposalTurn); 0 when none is visible, which means "whatever proposal stands now".
 */
export function standingProposalTurn(obs: Observation, by?: number): number {
  for (let i = obs.history.length - 1; i >= 0; i--) {
    const e = obs.history[i];
    if (e.fromReferee || e.seat === obs.seat) continue;
    if (by !== undefined && e.seat !== by) continue;
    if (e.move?.kind.case === "propose") return e.turn;
  }
  return 0;
}

/** What an allocation gives seat of resource on a side (receives by default); 0 when absent. */
export function amountFor(alloc: Allocation | undefined, seat: number, resource: string, side: ShareSide = ShareSide.RECEIVES): number {
  const sh = alloc?.shares.find((s) => s.seat === seat);
  if (!sh) return 0;
  return amount((side === ShareSide.GIVES ? sh.gives : sh.receives)[resource]);
}

/** The seats a form's bounds name, ascending: the members of a coalition's form. */
export function formSeats(form: ProposalForm): number[] {
  return [...new Set(form.bounds.map((b) => b.seat))].sort((a, b) => a - b);
}

/**
 * An Allocation of the form that is as close as the bounds and totals allow to what `want`
 * asks for each bound (a number per seat, or a function of the bound). Amounts are clamped to
 * their bounds; then each total is met exactly: a shortfall is added to the amounts in the
 * order of the form's bounds (each up to its max), an excess taken from them in reverse order
 * (each down to its min). When the bounds cannot meet a total at all the result keeps as close
 * as they allow (and the referee will refuse it).
 */
export function fillForm(form: ProposalForm, want: Record<number, Amount> | ((b: Bound) => Amount)): Allocation {
  const bounds = form.bounds;
  const pick = typeof want === "function" ? want : (b: Bound) => want[b.seat] ?? 0;
  const amounts = bounds.map((b) => clamp(b, pick(b)));
  for (const t of form.totals) {
    const idx = bounds.flatMap((b, i) => (b.side === t.side && b.resource === t.resource ? [i] : []));
    let diff = amount(t.total) - idx.reduce((s, i) => s + amounts[i], 0);
    for (const i of diff > 0 ? idx : [...idx].reverse()) {
      if (diff === 0) break;
      const room = diff > 0 ? amount(bounds[i].max) - amounts[i] : amount(bounds[i].min) - amounts[i];
      const step = diff > 0 ? Math.min(diff, room) : Math.max(diff, room);
      amounts[i] += step;
      diff -= step;
    }
  }
  const bySeat = new Map<number, SeatShare>();
  const alloc = create(AllocationSchema);
  bounds.forEach((b, i) => {
    let sh = bySeat.get(b.seat);
    if (!sh) {
      sh = create(SeatShareSchema, { seat: b.seat });
      bySeat.set(b.seat, sh);
      alloc.shares.push(sh);
    }
    (b.side === ShareSide.GIVES ? sh.gives : sh.receives)[b.resource] = BigInt(amounts[i]);
  });
  return alloc;
}

function bigMap(m: Record<string, Amount> | undefined): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of Object.entries(m ?? {})) out[k] = big(v);
  return out;
}
