// The builders and observation readers of moves.ts, and how agent.ts turns an author's
// object and return values into what the contract carries.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ActionSchema, ObservationSchema } from "../src/gen/parley/agent/v1/agent_pb.js";
import { AmountTotalSchema, BoundSchema, MoveKind, ProposalFormSchema, ShareSide } from "../src/gen/parley/game/v1/game_pb.js";
import {
  accept,
  action,
  allocation,
  amount,
  amountFor,
  asAction,
  big,
  choose,
  clamp,
  describeAgent,
  fillForm,
  findBound,
  formSeats,
  isLegal,
  pass,
  proposeAmount,
  proposeUltimatum,
  reject,
  say,
  sayOnly,
  share,
  shortError,
  standingProposalTurn,
} from "../src/index.js";

const R = ShareSide.RECEIVES;
const G = ShareSide.GIVES;

function bound(seat: number, side: ShareSide, resource: string, min: number, max: number) {
  return create(BoundSchema, { seat, side, resource, min: BigInt(min), max: BigInt(max) });
}

/** A form over seats with receives bounds [min, max] each and one total of `unit`. */
function form(unit: string, total: number, ...b: Array<[number, number, number]>) {
  return create(ProposalFormSchema, {
    bounds: b.map(([seat, min, max]) => bound(seat, R, unit, min, max)),
    totals: [create(AmountTotalSchema, { side: R, resource: unit, total: BigInt(total) })],
  });
}

/** Amounts an allocation gives each seat of unit (receives side), by seat. */
function received(a: ReturnType<typeof fillForm>, unit: string): Record<number, number> {
  return Object.fromEntries(a.shares.map((s) => [s.seat, amount(s.receives[unit])]));
}

describe("amounts", () => {
  test("big takes numbers and bigints and refuses what is not finite", () => {
    assert.equal(big(7), 7n);
    assert.equal(big(-2.9), -2n);
    assert.equal(big(12n), 12n);
    assert.throws(() => big(Number.NaN), /not a finite number/);
    assert.throws(() => big(Infinity), /not a finite number/);
  });
  test("amount reads int64 fields back as numbers", () => {
    assert.equal(amount(40n), 40);
    assert.equal(amount(undefined), 0);
    assert.equal(amount(3), 3);
  });
});

describe("moves", () => {
  test("ultimatum proposal: seat 0 gives x, and survives the wire", () => {
    const m = proposeUltimatum(40);
    assert.equal(m.kind.case, "propose");
    const a = fromBinary(ActionSchema, toBinary(ActionSchema, action(m)));
    const p = a.move?.kind.case === "propose" ? a.move.kind.value.proposal : undefined;
    assert.equal(p?.terms.case, "allocation");
    const alloc = p?.terms.case === "allocation" ? p.terms.value : undefined;
    assert.equal(alloc?.shares.length, 1);
    assert.equal(alloc?.shares[0].seat, 0);
    assert.deepEqual(alloc?.shares[0].gives, { Dollars: 40n });
    assert.deepEqual(alloc?.shares[0].receives, {});
    assert.deepEqual(proposeUltimatum(3n, "Euros").kind.value, proposeUltimatum(3, "Euros").kind.value);
  });
  test("proposeAmount fills the one amount a bound names, on its side", () => {
    const r = proposeAmount(bound(2, R, "g", 0, 10), 4);
    const g = proposeAmount(bound(1, G, "Dollars", 0, 10), 6);
    const rs = r.kind.case === "propose" && r.kind.value.proposal?.terms.case === "allocation" ? r.kind.value.proposal.terms.value.shares : [];
    const gs = g.kind.case === "propose" && g.kind.value.proposal?.terms.case === "allocation" ? g.kind.value.proposal.terms.value.shares : [];
    assert.deepEqual(rs.map((s) => [s.seat, s.receives, s.gives]), [[2, { g: 4n }, {}]]);
    assert.deepEqual(gs.map((s) => [s.seat, s.receives, s.gives]), [[1, {}, { Dollars: 6n }]]);
  });
  test("proposeAmount given the observation's bounds also sends every amount they fix", () => {
    const item = bound(0, G, "X", 1, 1);
    const price = bound(1, G, "ZUP", 0, 100);
    const pool = bound(2, R, "g", 5, 5);
    const m = proposeAmount(price, 40, [item, price, pool]);
    const shares = m.kind.case === "propose" && m.kind.value.proposal?.terms.case === "allocation" ? m.kind.value.proposal.terms.value.shares : [];
    assert.deepEqual(
      shares.map((s) => [s.seat, s.gives, s.receives]),
      [
        [0, { X: 1n }, {}],
        [1, { ZUP: 40n }, {}],
        [2, {}, { g: 5n }],
      ],
    );
  });
  test("the other kinds", () => {
    assert.deepEqual([accept().kind.case, reject().kind.case, pass().kind.case, sayOnly().kind.case, choose("c").kind.case], [
      "accept",
      "reject",
      "pass",
      "say",
      "choose",
    ]);
    const a = accept(7);
    assert.equal(a.kind.case === "accept" && a.kind.value.proposalTurn, 7);
    const c = choose("opt-2");
    assert.equal(c.kind.case === "choose" && c.kind.value.option, "opt-2");
  });
});

describe("messages and actions", () => {
  test("say addresses nobody (public), a seat, seats, or a slot", () => {
    assert.deepEqual(say("hi").to, []);
    assert.deepEqual(say("hi", 2).to, [2]);
    assert.deepEqual(say("hi", [0, 2]).to, [0, 2]);
    const slot = create(ObservationSchema, { requiredMessages: [{ to: [1, 3] }] }).requiredMessages[0];
    assert.deepEqual(say("hi", slot).to, [1, 3]);
    assert.equal(say("hi").proposal, undefined);
  });
  test("say attaches an allocation as terms", () => {
    const m = say("offer", 1, allocation(share(0, { receives: { g: 5 } })));
    assert.equal(m.proposal?.terms.case, "allocation");
  });
  test("action collects messages and private parts", () => {
    const a = action(accept(), say("yes"), say("only you", 1), { reasoning: "why", notes: "plan", usage: { model: "m", calls: 2 } });
    assert.equal(a.move?.kind.case, "accept");
    assert.deepEqual(a.messages.map((m) => m.text), ["yes", "only you"]);
    assert.equal(a.privateReasoning, "why");
    assert.equal(a.privateNotes, "plan");
    assert.equal(a.usage?.calls, 2);
  });
  test("asAction takes an Action or a Move and refuses anything else", () => {
    assert.equal(asAction(pass()).move?.kind.case, "pass");
    const a = action(reject());
    assert.equal(asAction(a), a);
    assert.throws(() => asAction({ move: pass() }), /must return an Action \(or a Move\), not object/);
    assert.throws(() => asAction(undefined), /not undefined/);
    assert.throws(() => asAction(null), /not null/);
    assert.throws(() => asAction(say("x")), /not parley.game.v1.Message/);
  });
});

describe("reading the observation", () => {
  const obs = create(ObservationSchema, {
    seat: 1,
    legalMoves: [MoveKind.ACCEPT, MoveKind.PROPOSE],
    proposalBounds: [bound(0, R, "g", 0, 10), bound(0, G, "Dollars", 5, 95)],
    history: [
      { turn: 1, seat: 0, move: { kind: { case: "propose", value: {} } } },
      { turn: 2, seat: 1, move: { kind: { case: "propose", value: {} } } },
      { turn: 3, seat: 2, move: { kind: { case: "propose", value: {} } } },
      { turn: 4, fromReferee: true },
      { turn: 4, seat: 0, move: { kind: { case: "pass", value: {} } } },
    ],
  });
  test("isLegal", () => {
    assert.ok(isLegal(obs, MoveKind.ACCEPT));
    assert.ok(!isLegal(obs, MoveKind.REJECT));
  });
  test("findBound matches every criterion given", () => {
    assert.equal(findBound(obs)?.resource, "g");
    assert.equal(findBound(obs, { side: G })?.resource, "Dollars");
    assert.equal(findBound(obs, { seat: 3 }), undefined);
    assert.equal(findBound(obs.proposalBounds, { resource: "Dollars", seat: 0 })?.side, G);
  });
  test("clamp", () => {
    const b = bound(0, G, "Dollars", 5, 95);
    assert.deepEqual([clamp(b, 0), clamp(b, 50), clamp(b, 200n)], [5, 50, 95]);
    // No known upper limit (another seat's hidden holdings): only the minimum binds.
    const hidden = { ...bound(1, G, "Y", 0, 0), max: 9223372036854775807n, maxUnknown: true };
    assert.deepEqual([clamp(hidden, -3), clamp(hidden, 40), clamp(hidden, 500n)], [0, 40, 500]);
  });
  test("standingProposalTurn: latest proposal by another seat, or by the seat asked", () => {
    assert.equal(standingProposalTurn(obs), 3);
    assert.equal(standingProposalTurn(obs, 0), 1);
    assert.equal(standingProposalTurn(obs, 1), 0); // its own are skipped
    assert.equal(standingProposalTurn(create(ObservationSchema)), 0);
  });
  test("amountFor and formSeats", () => {
    const a = allocation(share(2, { receives: { g: 7 } }), share(0, { gives: { g: 3 } }));
    assert.equal(amountFor(a, 2, "g"), 7);
    assert.equal(amountFor(a, 0, "g"), 0);
    assert.equal(amountFor(a, 0, "g", G), 3);
    assert.equal(amountFor(undefined, 0, "g"), 0);
    assert.deepEqual(formSeats(form("g", 10, [2, 0, 10], [0, 0, 10], [2, 0, 1])), [0, 2]);
  });
});

describe("fillForm", () => {
  test("exactly what was asked when it is legal", () => {
    assert.deepEqual(received(fillForm(form("g", 1000, [0, 0, 1000], [1, 0, 1000], [2, 0, 1000]), [417, 292, 291]), "g"), { 0: 417, 1: 292, 2: 291 });
  });
  test("a shortfall goes to the bounds in order, up to each max", () => {
    assert.deepEqual(received(fillForm(form("g", 100, [0, 0, 30], [1, 0, 100]), { 0: 10, 1: 10 }), "g"), { 0: 30, 1: 70 });
  });
  test("an excess comes off the bounds in reverse order, down to each min", () => {
    assert.deepEqual(received(fillForm(form("g", 100, [0, 20, 100], [1, 40, 100]), { 0: 90, 1: 90 }), "g"), { 0: 60, 1: 40 });
  });
  test("amounts are clamped first, and a function can pick them", () => {
    assert.deepEqual(received(fillForm(form("g", 50, [0, 10, 40], [1, 10, 40]), (b) => (b.seat === 0 ? -5 : 99)), "g"), { 0: 10, 1: 40 });
  });
  test("a total the bounds cannot meet stays as close as they allow", () => {
    assert.deepEqual(received(fillForm(form("g", 500, [0, 0, 100], [1, 0, 100]), {}), "g"), { 0: 100, 1: 100 });
  });
  test("only the amounts of the total's side and resource count toward it", () => {
    const f = create(ProposalFormSchema, {
      bounds: [bound(0, R, "g", 0, 10), bound(0, G, "g", 0, 10), bound(1, R, "g", 0, 10)],
      totals: [create(AmountTotalSchema, { side: R, resource: "g", total: 10n })],
    });
    const a = fillForm(f, { 0: 4, 1: 0 });
    assert.deepEqual(
      a.shares.map((s) => [s.seat, s.receives, s.gives]),
      [
        [0, { g: 10n }, { g: 4n }],
        [1, { g: 0n }, {}],
      ],
    );
  });
});

describe("describing an agent", () => {
  test("from its fields, the name defaulting to the class", async () => {
    class MyBot {
      version = "2";
      games = ["ultimatum"];
      act() {
        return pass();
      }
    }
    const info = await describeAgent(new MyBot());
    assert.deepEqual([info.name, info.version, info.games], ["MyBot", "2", ["ultimatum"]]);
    assert.equal((await describeAgent({ act: () => pass() })).name, "agent");
  });
  test("from describe(), as an init object or a message", async () => {
    const info = await describeAgent({ act: () => pass(), describe: () => ({ name: "d", author: "me" }) });
    assert.deepEqual([info.name, info.author, info.$typeName], ["d", "me", "parley.game.v1.AgentInfo"]);
    await assert.rejects(() => describeAgent({ act: () => pass(), describe: () => null as never }), /must return an AgentInfo/);
  });
  test("shortError keeps the kind and the message, cut to a few hundred characters", () => {
    assert.equal(shortError("act()", new RangeError("bad")), "agent act() threw RangeError: bad");
    assert.equal(shortError("act()", "oops"), "agent act() threw string: oops");
    const long = shortError("act()", new Error("x".repeat(1000)));
    assert.equal(long.length, 300);
    assert.ok(long.endsWith("..."));
  });
});
