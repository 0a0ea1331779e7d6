// serve(): a real gRPC server on loopback, called by a real gRPC client (connect-node's gRPC
// transport over HTTP/2, as grpc-go speaks it).

import assert from "node:assert/strict";
import * as net from "node:net";
import { after, describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AgentService, ObservationSchema } from "../src/gen/parley/agent/v1/agent_pb.js";
import { type ActContext, type Agent, HealthService, HealthStatus, type Observation, action, parseHostPort, pass, say, serve } from "../src/index.js";

function clients(address: string) {
  const transport = createGrpcTransport({ baseUrl: `http://${address}` });
  return { agent: createClient(AgentService, transport), health: createClient(HealthService, transport) };
}

/** The error a call ends with; fails the test when it succeeds. */
async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  assert.fail("the call succeeded");
}

/** The code a call ends with, undefined when it succeeds. */
async function codeOf(p: Promise<unknown>): Promise<Code | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

/** Resolves once signal is aborted; a hang is bounded by the test's timeout. */
function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((r) => signal.addEventListener("abort", () => r(), { once: true }));
}

describe("serve", async () => {
  const seen: Array<{ obs: Observation; ctx: ActContext }> = [];
  let onWait: (ctx: ActContext) => void = () => {};
  // "together" calls return only once all four have begun: served one at a time, they never would.
  let together = 0;
  let allBegun!: () => void;
  const begun = new Promise<void>((r) => (allBegun = r));
  const logged: string[] = [];
  const agent: Agent = {
    name: "tester",
    version: "1.2",
    games: ["ultimatum"],
    async act(obs, ctx) {
      seen.push({ obs, ctx });
      switch (obs.briefing) {
        case "throw":
          throw new RangeError("no strategy here");
        case "junk":
          return { move: "accept" } as never;
        case "wait":
          // Until the caller gives up.
          onWait(ctx);
          await aborted(ctx.signal);
          return pass();
        case "together":
          if (++together === 4) allBegun();
          await begun;
          return pass();
        default:
          return action(pass(), say(`seen turn ${obs.turn}`));
      }
    },
  };
  const server = await serve(agent, { address: "127.0.0.1:0", log: (msg) => logged.push(msg) });
  after(() => server.close(0));
  const { agent: client, health } = clients(server.address);
  const obs = (init: Parameters<typeof create<typeof ObservationSchema>>[1]) => create(ObservationSchema, init);

  test("binds the port asked for, or a free one", () => {
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(parseHostPort(server.address).port, 0);
  });

  test("Describe answers from the agent's fields", async () => {
    const res = await client.describe({});
    assert.deepEqual([res.agent?.name, res.agent?.version, res.agent?.games], ["tester", "1.2", ["ultimatum"]]);
  });

  test("Act hands over the observation, echoes its turn and returns the action", async () => {
    const res = await client.act({ observation: obs({ matchId: "m1", game: "ultimatum", seat: 1, turn: 5 }) }, { timeoutMs: 600_000 });
    assert.equal(res.turn, 5);
    assert.equal(res.action?.move?.kind.case, "pass");
    assert.deepEqual(res.action?.messages.map((m) => m.text), ["seen turn 5"]);
    const last = seen.at(-1)!;
    assert.deepEqual([last.obs.matchId, last.obs.seat], ["m1", 1]);
    // The gRPC deadline of 10 minutes becomes the context's (however slow the call was, well
    // over a minute of it is left).
    const left = last.ctx.deadline!.getTime() - Date.now();
    assert.ok(left > 60_000 && left <= 600_000, `deadline ${left} ms away`);
  });

  test("a throw in act() is INTERNAL with a short message, the stack logged", async () => {
    const err = await failure(client.act({ observation: obs({ briefing: "throw", turn: 2 }) }));
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "agent act() threw RangeError: no strategy here");
    assert.ok(logged.some((l) => l.includes("act() failed") && l.includes("turn 2")));
  });

  test("an act() result that is no Action is INTERNAL", async () => {
    const err = await failure(client.act({ observation: obs({ briefing: "junk" }) }));
    assert.equal(err.code, Code.Internal);
    assert.match(err.rawMessage, /must return an Action/);
  });

  test("a request without an observation is INVALID_ARGUMENT", async () => {
    assert.equal(await codeOf(client.act({})), Code.InvalidArgument);
  });

  test("the caller's deadline aborts the context's signal", async () => {
    for (let attempt = 1; ; attempt++) {
      const reached = new Promise<ActContext>((r) => (onWait = r));
      assert.equal(await codeOf(client.act({ observation: obs({ briefing: "wait" }) }, { timeoutMs: 200 })), Code.DeadlineExceeded);
      // On a loaded machine a call may lapse before it reaches act(): then another is made.
      const ctx = await Promise.race([reached, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000).unref())]);
      if (ctx === undefined) {
        assert.ok(attempt < 5, "none of 5 calls reached act()");
        continue;
      }
      assert.ok(ctx.deadline, "act() was given no deadline");
      // The server notices too (its own timer or the stream's reset): the test's timeout bounds it.
      await aborted(ctx.signal);
      return;
    }
  });

  test("calls run concurrently", async () => {
    // Each call returns only once all four have begun, so calls served one at a time would
    // reach their (generous) deadline instead.
    const calls = [1, 2, 3, 4].map(() => client.act({ observation: obs({ briefing: "together" }) }, { timeoutMs: 50_000 }));
    for (const code of await Promise.all(calls.map(codeOf))) assert.equal(code, undefined);
  });

  test("health: SERVING for the server and AgentService, NOT_FOUND otherwise", async () => {
    for (const service of ["", "parley.agent.v1.AgentService"]) {
      assert.equal((await health.check({ service })).status, HealthStatus.SERVING, service);
    }
    assert.equal(await codeOf(health.check({ service: "no.such.Service" })), Code.NotFound);
  });
});

describe("serve: start and stop", () => {
  test("a port in use is an error, not a hang", async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await assert.rejects(serve({ act: () => pass() }, { address: `127.0.0.1:${port}` }), /EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  test("an agent without act() is refused", async () => {
    await assert.rejects(serve({} as Agent, { address: "127.0.0.1:0" }), /needs an act/);
  });

  test("close lets a call in flight finish, then refuses new ones", async () => {
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const server = await serve({
      act: async () => {
        started();
        await new Promise<void>((r) => (release = r));
        return pass();
      },
    }, { address: "127.0.0.1:0" });
    const { agent } = clients(server.address);
    const call = agent.act({ observation: create(ObservationSchema, { turn: 9 }) });
    await running;
    const closed = server.close(60_000);
    release();
    const res = await call;
    assert.equal(res.turn, 9);
    await closed;
    assert.equal(await codeOf(clients(server.address).agent.describe({}, { timeoutMs: 30_000 })), Code.Unavailable);
  });

  test("close cuts calls still running after the grace period", async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const server = await serve({
      act: () => {
        started();
        return new Promise(() => {});
      },
    }, { address: "127.0.0.1:0" });
    const outcome = codeOf(clients(server.address).agent.act({ observation: create(ObservationSchema) }));
    await running;
    // A close that waited for the call would never end: the test's timeout bounds it.
    await server.close(200);
    assert.notEqual(await outcome, undefined);
  });
});

describe("parseHostPort", () => {
  test("host:port, [v6]:port, :port", () => {
    assert.deepEqual(parseHostPort("0.0.0.0:50071"), { host: "0.0.0.0", port: 50071 });
    assert.deepEqual(parseHostPort("[::1]:9"), { host: "::1", port: 9 });
    assert.deepEqual(parseHostPort(":0"), { host: "127.0.0.1", port: 0 });
  });
  test("bad addresses are one clear error", () => {
    for (const bad of ["localhost", "1.2.3.4:", "host:port", "h:70000", ""]) {
      assert.throws(() => parseHostPort(bad), /parley: (address .* is not host:port|port 70000 out of range)/, bad);
    }
  });
});
