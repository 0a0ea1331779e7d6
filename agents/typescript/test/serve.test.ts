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

describe("serve", async () => {
  const seen: Array<{ obs: Observation; ctx: ActContext }> = [];
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
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          return pass();
        case "slow":
          await new Promise((resolve) => setTimeout(resolve, 300));
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
    const res = await client.act({ observation: obs({ matchId: "m1", game: "ultimatum", seat: 1, turn: 5 }) }, { timeoutMs: 5000 });
    assert.equal(res.turn, 5);
    assert.equal(res.action?.move?.kind.case, "pass");
    assert.deepEqual(res.action?.messages.map((m) => m.text), ["seen turn 5"]);
    const last = seen.at(-1)!;
    assert.deepEqual([last.obs.matchId, last.obs.seat], ["m1", 1]);
    // The gRPC deadline becomes the context's.
    const left = last.ctx.deadline!.getTime() - Date.now();
    assert.ok(left > 3000 && left <= 5000, `deadline ${left} ms away`);
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
    const start = Date.now();
    assert.equal(await codeOf(client.act({ observation: obs({ briefing: "wait" }) }, { timeoutMs: 200 })), Code.DeadlineExceeded);
    const ctx = seen.findLast((s) => s.obs.briefing === "wait")!.ctx;
    // The server notices too (its own timer or the stream's reset), soon after.
    for (let i = 0; i < 50 && !ctx.signal.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(ctx.signal.aborted, "act()'s signal not aborted after the deadline");
    assert.ok(Date.now() - start < 3000);
  });

  test("calls run concurrently", async () => {
    const start = Date.now();
    await Promise.all([1, 2, 3, 4].map(() => client.act({ observation: obs({ briefing: "slow" }) })));
    assert.ok(Date.now() - start < 1100, `4 calls of 300 ms took ${Date.now() - start} ms`);
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
    const closed = server.close(5000);
    setTimeout(() => release(), 100);
    const res = await call;
    assert.equal(res.turn, 9);
    await closed;
    assert.equal(await codeOf(clients(server.address).agent.describe({}, { timeoutMs: 2000 })), Code.Unavailable);
  });

  test("close cuts calls still running after the grace period", async () => {
    const server = await serve({ act: () => new Promise(() => {}) }, { address: "127.0.0.1:0" });
    const outcome = codeOf(clients(server.address).agent.act({ observation: create(ObservationSchema) }));
    await new Promise((r) => setTimeout(r, 100));
    const start = Date.now();
    await server.close(200);
    assert.ok(Date.now() - start < 2000, `close took ${Date.now() - start} ms`);
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
