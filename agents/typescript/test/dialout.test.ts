// dialOut(): the bot's side of BotLinkService.Connect, against a gateway on loopback (see
// gateway.ts): Hello with the team token, Calls answered concurrently, deadlines, reconnection,
// refusal, and a graceful stop.

import assert from "node:assert/strict";
import * as net from "node:net";
import { afterEach, describe, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Welcome } from "../src/gen/parley/botlink/v1/botlink_pb.js";
import { type ActContext, type Agent, type DialOutOptions, action, dialOut, gatewayUrl, pass, say } from "../src/index.js";
import { type FakeGateway, startGateway } from "./gateway.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An agent whose act() does what the observation's briefing says ("hold" waits for held). */
function scriptedAgent(seen: ActContext[] = [], held: Promise<void> = Promise.resolve()): Agent {
  return {
    name: "dialer",
    version: "3.1",
    async act(obs, ctx) {
      seen.push(ctx);
      switch (obs.briefing) {
        case "throw":
          throw new TypeError("cannot play this");
        case "hold":
          await held;
          return action(pass(), say("held"));
        case "until-aborted":
          await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
          return pass();
        default:
          return action(pass(), say(`turn ${obs.turn}`));
      }
    },
  };
}

describe("dialOut", () => {
  let gw: FakeGateway | undefined;
  let stop: AbortController;
  let link: Promise<void> | undefined;
  const welcomes: Welcome[] = [];
  const retries: ConnectError[] = [];

  async function connect(agent: Agent, opts: Partial<DialOutOptions> = {}) {
    gw = await startGateway();
    stop = new AbortController();
    link = dialOut(agent, {
      gateway: gw.address,
      token: "team-token",
      signal: stop.signal,
      minBackoffMs: 10,
      maxBackoffMs: 50,
      onWelcome: (w) => welcomes.push(w),
      onRetry: (err) => retries.push(err),
      log: () => {},
      ...opts,
    });
    return gw.session(0);
  }

  afterEach(async () => {
    stop?.abort();
    await link;
    await gw?.close();
    gw = link = undefined;
    welcomes.length = retries.length = 0;
  });

  test("says Hello as the agent, with the token as Bearer, and is welcomed", async () => {
    const s = await connect(scriptedAgent());
    assert.deepEqual([s.hello.bot, s.hello.version], ["dialer", ""]); // an empty version is not checked
    assert.equal(s.authorization, "Bearer team-token");
    await s.describe(); // the Welcome was read before any answer
    assert.deepEqual(welcomes.map((w) => w.address), ["bot:blue/dialer"]);
  });

  test("bot and version may be set apart from the agent's description", async () => {
    const s = await connect(scriptedAgent(), { bot: "registered-name", version: "3.1" });
    assert.deepEqual([s.hello.bot, s.hello.version], ["registered-name", "3.1"]);
  });

  test("answers act and describe calls by id, echoing the turn", async () => {
    const s = await connect(scriptedAgent());
    const r = await s.act({ observation: { turn: 7, briefing: "" } });
    assert.equal(r.kind.case, "act");
    assert.equal(r.kind.case === "act" && r.kind.value.turn, 7);
    assert.deepEqual(r.kind.case === "act" && r.kind.value.action?.messages.map((m) => m.text), ["turn 7"]);
    const d = await s.describe();
    assert.equal(d.kind.case === "describe" && d.kind.value.agent?.name, "dialer");
    assert.deepEqual(s.order, ["c1", "c2"]);
  });

  test("a throw in act() is an error result, and the link stays up", async () => {
    const s = await connect(scriptedAgent());
    const r = await s.act({ observation: { briefing: "throw" } });
    assert.deepEqual(r.kind, { case: "error", value: "agent act() threw TypeError: cannot play this" });
    const r2 = await s.act({ observation: {} });
    assert.equal(r2.kind.case, "act");
    const noObs = await s.act({});
    assert.deepEqual(noObs.kind, { case: "error", value: "act request without an observation" });
  });

  test("calls are answered concurrently, each when ready", async () => {
    let release!: () => void;
    const s = await connect(scriptedAgent([], new Promise<void>((r) => (release = r))));
    const held = s.act({ observation: { briefing: "hold" } });
    // The second call is answered while the first is held (one at a time, it never would be).
    const quick = await s.act({ observation: { briefing: "" } });
    release();
    const slow = await held;
    assert.deepEqual(s.order, ["c2", "c1"]);
    assert.equal(slow.callId, "c1");
    assert.equal(quick.callId, "c2");
  });

  test("a call's deadline aborts act()'s signal", async () => {
    const seen: ActContext[] = [];
    const s = await connect(scriptedAgent(seen));
    const deadline = new Date(Date.now() + 150);
    const start = Date.now();
    const r = await s.act({ observation: { briefing: "until-aborted" } }, deadline);
    assert.equal(r.kind.case, "act");
    // Not before the deadline (a loaded machine may answer any time after it).
    assert.ok(Date.now() - start >= 100, `answered after ${Date.now() - start} ms`);
    assert.equal(seen[0].deadline?.getTime(), deadline.getTime());
    assert.ok(seen[0].signal.aborted);
  });

  test("reconnects when the gateway ends the stream", async () => {
    const first = await connect(scriptedAgent());
    first.end();
    const second = await gw!.session(1);
    assert.equal(second.hello.bot, "dialer");
    assert.equal((await second.act({ observation: { turn: 3 } })).kind.case, "act");
    assert.equal(retries.length, 1);
    assert.equal(retries[0].code, Code.Unavailable);
    assert.equal(welcomes.length, 2);
  });

  test("stopping lets calls in flight answer, then resolves", async () => {
    const seen: ActContext[] = [];
    let release!: () => void;
    const s = await connect(scriptedAgent(seen, new Promise<void>((r) => (release = r))));
    const pending = s.act({ observation: { briefing: "hold" } });
    while (seen.length === 0) await sleep(5); // act() has begun
    stop.abort();
    release();
    const r = await pending;
    assert.deepEqual(r.kind.case === "act" && r.kind.value.action?.messages.map((m) => m.text), ["held"]);
    await link;
  });

  for (const code of [Code.Unauthenticated, Code.PermissionDenied, Code.NotFound]) {
    test(`a session refused with ${Code[code]} ends dialOut, without retrying`, async () => {
      gw = await startGateway();
      gw.refuse = code;
      const err = await dialOut(scriptedAgent(), { gateway: gw.address, token: "team-token", minBackoffMs: 10, log: () => {} }).then(
        () => assert.fail("dialOut resolved"),
        (e) => e,
      );
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, code);
      assert.equal(gw.hellos.length, 1);
    });
  }

  test("a wrong token is UNAUTHENTICATED", async () => {
    gw = await startGateway("the-real-token");
    await assert.rejects(dialOut(scriptedAgent(), { gateway: gw.address, token: "guess", log: () => {} }), (e: ConnectError) => e.code === Code.Unauthenticated);
  });

  test("an unreachable gateway is retried until stopped", async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    stop = new AbortController();
    link = dialOut(scriptedAgent(), {
      gateway: `127.0.0.1:${port}`,
      token: "t",
      signal: stop.signal,
      minBackoffMs: 5,
      maxBackoffMs: 20,
      onRetry: (err) => retries.push(err),
    });
    while (retries.length < 3) await sleep(20); // bounded by the test's timeout
    assert.equal(retries[0].code, Code.Unavailable);
    stop.abort();
    await link;
  });

  test("bad options are refused at once", async () => {
    await assert.rejects(dialOut(scriptedAgent(), { gateway: "127.0.0.1:1", token: "" }), /needs the team token/);
    await assert.rejects(dialOut({} as Agent, { gateway: "127.0.0.1:1", token: "t" }), /needs an act/);
    await assert.rejects(dialOut(scriptedAgent(), { gateway: " ", token: "t" }), /no gateway address/);
  });
});

describe("gatewayUrl", () => {
  test("host:port is plain HTTP/2; URLs stay as given", () => {
    assert.equal(gatewayUrl("127.0.0.1:8080"), "http://127.0.0.1:8080");
    assert.equal(gatewayUrl("https://parley.example.org/"), "https://parley.example.org");
    assert.equal(gatewayUrl("http://[::1]:9"), "http://[::1]:9");
  });
});
