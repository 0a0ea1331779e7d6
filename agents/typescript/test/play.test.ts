// Play over a real stream (connect-node's gRPC transport over HTTP/2, as grpc-go speaks it):
// each call's observation is put back together from what it leaves out as the previous
// call's, so act() is given what Act would give it.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { clone, create, equals } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  AgentService,
  HistoryEntrySchema,
  type Observation,
  ObservationSchema,
  type PlayRequest,
  PlayRequestSchema,
  SameAsBeforeSchema,
} from "../src/gen/parley/agent/v1/agent_pb.js";
import { SeatInfoSchema } from "../src/gen/parley/game/v1/game_pb.js";
import { type Agent, pass, serve } from "../src/index.js";

async function* feed(reqs: PlayRequest[]): AsyncGenerator<PlayRequest> {
  for (const r of reqs) yield r;
}

describe("Play", async () => {
  const seen: Observation[] = [];
  const agent: Agent = {
    name: "recorder",
    skipsBriefing: true,
    act(obs) {
      seen.push(clone(ObservationSchema, obs));
      return pass();
    },
  };
  const server = await serve(agent, { address: "127.0.0.1:0", log: () => {} });
  after(() => server.close(0));
  const client = createClient(AgentService, createGrpcTransport({ baseUrl: `http://${server.address}` }));

  test("Describe says how the agent observes", async () => {
    const res = await client.describe({});
    assert.equal(res.observing?.streamsSpanMatches, true);
    assert.equal(res.observing?.skipsBriefing, true);
  });

  test("calls are put back together", async () => {
    seen.length = 0;
    const rules = "Rules: é and ü, line after line.\n".repeat(12);
    const entry = (turn: number) => create(HistoryEntrySchema, { turn, seat: turn % 2, summary: `turn ${turn}` });
    const whole = [1, 3, 5].map((turn) =>
      create(ObservationSchema, {
        matchId: "m",
        game: "ultimatum",
        turn,
        seats: [create(SeatInfoSchema, { seat: 0, name: "P1" }), create(SeatInfoSchema, { seat: 1, name: "P2" })],
        briefing: rules + `Your situation on turn ${turn}: ü\n`,
        history: Array.from({ length: turn - 1 }, (_, i) => entry(i + 1)),
      }),
    );
    const sent = [create(PlayRequestSchema, { call: 1n, act: { observation: whole[0] } })];
    for (const i of [1, 2]) {
      const obs = clone(ObservationSchema, whole[i]);
      obs.seats = [];
      obs.briefing = whole[i].briefing.slice(rules.length);
      obs.history = obs.history.slice(whole[i - 1].history.length);
      const same = create(SameAsBeforeSchema, { seats: true, briefingBytes: Buffer.byteLength(rules), history: true, historyFrom: 0 });
      sent.push(create(PlayRequestSchema, { call: BigInt(i + 1), act: { observation: obs }, sameAsBefore: same }));
    }
    const answers = [];
    for await (const a of client.play(feed(sent), { timeoutMs: 10000 })) answers.push(a);
    assert.deepEqual(answers.map((a) => [a.call, a.errorCode, a.act?.action?.move?.kind.case]), [
      [1n, 0, "pass"],
      [2n, 0, "pass"],
      [3n, 0, "pass"],
    ]);
    assert.equal(seen.length, 3);
    seen.forEach((got, i) => assert.ok(equals(ObservationSchema, got, whole[i]), `call ${i + 1}: ${JSON.stringify(got)}`));
  });

  test("a call that cannot be followed is refused, and a whole one after it followed", async () => {
    seen.length = 0;
    const obs = create(ObservationSchema, { turn: 1 });
    const reqs = [
      create(PlayRequestSchema, { call: 1n, act: { observation: obs }, sameAsBefore: { seats: true } }),
      create(PlayRequestSchema, { call: 2n, act: { observation: obs } }),
    ];
    const answers = [];
    for await (const a of client.play(feed(reqs), { timeoutMs: 10000 })) answers.push(a);
    assert.equal(answers[0].errorCode, 3); // INVALID_ARGUMENT
    assert.match(answers[0].errorMessage, /no earlier call/);
    assert.equal(answers[1].errorCode, 0);
    assert.equal(seen.length, 1);
  });
});
