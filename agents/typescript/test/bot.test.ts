// The example bot's decisions on a few observations shaped as the referee sends them. Whether
// its moves are legal in real matches is checked by the Go end-to-end test
// (cmd/parley/typescript_e2e_test.go), which plays it against Go bots.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { ObservationSchema } from "../src/gen/parley/agent/v1/agent_pb.js";
import { MoveKind, ShareSide } from "../src/gen/parley/game/v1/game_pb.js";
import { ViewSchema as CoalitionViewSchema } from "../src/gen/parley/games/coalition/v1/coalition_pb.js";
import { allocation, amount, describeAgent, share } from "../src/index.js";
import { ExampleBot, shapleySplit } from "../examples/bot.js";

function coalitionView(values: Array<[number[], number]>, players = ["A", "B", "C"]) {
  return create(CoalitionViewSchema, {
    players,
    unit: "g",
    values: values.map(([members, value]) => ({ members, value: BigInt(value) })),
    maxProposals: 10,
  });
}

const threeway = coalitionView([
  [[0, 1], 750],
  [[0, 2], 750],
  [[1, 2], 500],
  [[0, 1, 2], 1000],
]);

describe("shapleySplit", () => {
  test("the default coalition game: (416.7, 291.7, 291.7) rounded to add up to 1000", () => {
    assert.deepEqual(shapleySplit(threeway), [417, 292, 291]);
  });
  test("a symmetric game splits evenly", () => {
    assert.deepEqual(shapleySplit(coalitionView([[[0, 1], 10]], ["A", "B"])), [5, 5]);
  });
  test("a dummy player gets nothing", () => {
    assert.deepEqual(shapleySplit(coalitionView([[[0, 1], 600], [[0, 1, 2], 600]])), [300, 300, 0]);
  });
});

describe("ExampleBot", () => {
  const bot = new ExampleBot();

  test("ultimatum: accepts a good standing offer, naming its turn", () => {
    const obs = create(ObservationSchema, {
      game: "ultimatum",
      seat: 1,
      turn: 2,
      maxTurns: 8,
      legalMoves: [MoveKind.PROPOSE, MoveKind.ACCEPT, MoveKind.REJECT],
      history: [{ turn: 1, seat: 0, move: { kind: { case: "propose", value: {} } } }],
      view: { case: "ultimatum", value: { standingOffer: 60n, standingProposer: 0, turnsLeft: 7, params: {} } },
    });
    const a = bot.act(obs);
    assert.equal(a.move?.kind.case, "accept");
    assert.equal(a.move?.kind.case === "accept" && a.move.kind.value.proposalTurn, 1);
  });

  test("ultimatum: a low offer is countered inside the bounds, and the ask remembered", () => {
    const obs = create(ObservationSchema, {
      seat: 1,
      turn: 2,
      legalMoves: [MoveKind.PROPOSE, MoveKind.ACCEPT, MoveKind.REJECT],
      proposalBounds: [{ seat: 0, side: ShareSide.GIVES, resource: "Dollars", min: 0n, max: 100n }],
      view: { case: "ultimatum", value: { standingOffer: 5n, standingProposer: 0, turnsLeft: 7, params: {} } },
    });
    const a = bot.act(obs);
    assert.equal(a.move?.kind.case, "propose");
    const p = a.move?.kind.case === "propose" ? a.move.kind.value.proposal : undefined;
    const gives = p?.terms.case === "allocation" ? amount(p.terms.value.shares[0].gives.Dollars) : -1;
    assert.ok(gives > 50 && gives <= 60, `asks for ${gives}`);
    assert.match(a.privateNotes, new RegExp(`asked for ${gives}`));
  });

  test("coalition talk: exactly one message per required slot, with the Shapley offer", () => {
    const obs = create(ObservationSchema, {
      seat: 0,
      legalMoves: [MoveKind.SAY],
      requiredMessages: [{ to: [1] }, { to: [2] }],
      messageTermForms: [
        {
          bounds: [0, 1, 2].map((seat) => ({ seat, side: ShareSide.RECEIVES, resource: "g", max: 1000n })),
          totals: [{ side: ShareSide.RECEIVES, resource: "g", total: 1000n }],
        },
      ],
      view: { case: "coalition", value: threeway },
    });
    const a = bot.act(obs);
    assert.equal(a.move?.kind.case, "say");
    assert.deepEqual(a.messages.map((m) => m.to), [[1], [2]]);
    const terms = a.messages[0].proposal?.terms;
    assert.deepEqual(terms?.case === "allocation" && terms.value.shares.map((s) => amount(s.receives.g)), [417, 292, 291]);
  });

  test("coalition vote: a proposal at its Shapley share passes, a stingy one is voted down", () => {
    const vote = (mine: number) =>
      bot.act(
        create(ObservationSchema, {
          seat: 2,
          legalMoves: [MoveKind.ACCEPT, MoveKind.REJECT],
          view: {
            case: "coalition",
            value: create(CoalitionViewSchema, {
              ...threeway,
              proposalsMade: 1,
              pending: allocation(share(0, { receives: { g: 1000 - mine } }), share(2, { receives: { g: mine } })),
            }),
          },
        }),
      ).move?.kind.case;
    assert.equal(vote(291), "accept");
    assert.equal(vote(100), "reject");
  });

  test("after a refused action it falls back to the simplest legal move", () => {
    const obs = create(ObservationSchema, {
      legalMoves: [MoveKind.REJECT, MoveKind.PASS],
      lastRejection: { code: 2, message: "no" },
      view: { case: "ultimatum", value: { turnsLeft: 3 } },
    });
    assert.equal(bot.act(obs).move?.kind.case, "reject");
  });

  test("describes itself for both games", async () => {
    const info = await describeAgent(bot);
    assert.deepEqual([info.name, info.games], ["ts-example", ["ultimatum", "coalition"]]);
  });
});
