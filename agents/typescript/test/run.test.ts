// run(): the one switch between serving and dialling out, from flags and the environment.

import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AgentService } from "../src/gen/parley/agent/v1/agent_pb.js";
import { type Agent, pass, run, runConfig } from "../src/index.js";
import { startGateway } from "./gateway.js";

const agent: Agent = { name: "runner", version: "9", act: () => pass() };

describe("runConfig", () => {
  test("serves by default, on the default address", () => {
    assert.deepEqual(runConfig([], {}), { mode: "serve", listen: "127.0.0.1:50051", graceMs: 5000 });
    assert.deepEqual(runConfig([], {}, "0.0.0.0:7"), { mode: "serve", listen: "0.0.0.0:7", graceMs: 5000 });
  });
  test("a flag wins over its variable", () => {
    assert.equal((runConfig(["--listen", ":1"], { PARLEY_LISTEN: ":2" }) as { listen: string }).listen, ":1");
    assert.equal((runConfig([], { PARLEY_LISTEN: ":2" }) as { listen: string }).listen, ":2");
    assert.equal(runConfig(["--grace", "0.5"], { PARLEY_GRACE: "9" })!.graceMs, 500);
  });
  test("--dial-out or PARLEY_DIAL_OUT dials out, with the token from PARLEY_TOKEN or --token", () => {
    assert.deepEqual(runConfig(["--dial-out", "gw:443", "--bot", "b", "--version", "2"], { PARLEY_TOKEN: "s3cret" }), {
      mode: "dial",
      gateway: "gw:443",
      token: "s3cret",
      bot: "b",
      version: "2",
      graceMs: 5000,
    });
    assert.deepEqual(runConfig([], { PARLEY_DIAL_OUT: "http://gw:1", PARLEY_TOKEN: "t", PARLEY_BOT: "x" }), {
      mode: "dial",
      gateway: "http://gw:1",
      token: "t",
      bot: "x",
      version: "",
      graceMs: 5000,
    });
    assert.equal((runConfig(["--dial-out", "gw:1", "--token", "flag"], { PARLEY_TOKEN: "env" }) as { token: string }).token, "flag");
  });
  test("--listen overrides PARLEY_DIAL_OUT", () => {
    assert.equal(runConfig(["--listen", ":3"], { PARLEY_DIAL_OUT: "gw:1", PARLEY_TOKEN: "t" })!.mode, "serve");
  });
  test("usage errors are one clear message", () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [["--dial-out", "gw:1"], {}, /needs the team token in PARLEY_TOKEN/],
      [["--listen", ":1", "--dial-out", "gw:1"], { PARLEY_TOKEN: "t" }, /exclude each other/],
      [["--bot", "b"], {}, /--bot is for --dial-out/],
      [["--token", "t"], {}, /--token is for --dial-out/],
      [["--grace", "soon"], {}, /--grace must be a number of seconds/],
      [["--grace=-1"], {}, /--grace must be a number of seconds/],
      [["extra"], {}, /unexpected argument "extra"/],
      [["--dial", "gw:1"], {}, /Unknown option '--dial'/],
      [["--listen"], {}, /argument missing/],
    ];
    for (const [argv, env, want] of cases) assert.throws(() => runConfig(argv, env), want, argv.join(" "));
  });
  test("--help", () => {
    assert.equal(runConfig(["-h"], {}), null);
  });
});

describe("run", () => {
  afterEach(() => {
    process.exitCode = 0; // run() sets it, for scripts; not this test's status
  });

  test("serves until stopped, printing the address", async () => {
    const stop = new AbortController();
    const lines: string[] = [];
    let listening!: (addr: string) => void;
    const addr = new Promise<string>((r) => (listening = r));
    const done = run(agent, {
      argv: ["--listen", "127.0.0.1:0"],
      env: {},
      signal: stop.signal,
      out: (l) => {
        lines.push(l);
        if (l.startsWith("listening on ")) listening(l.slice("listening on ".length));
      },
    });
    const client = createClient(AgentService, createGrpcTransport({ baseUrl: `http://${await addr}` }));
    assert.equal((await client.describe({})).agent?.name, "runner");
    stop.abort();
    assert.equal(await done, 0);
  });

  test("dials out when told to, as the agent's name unless --bot says otherwise", async () => {
    const gw = await startGateway("tok");
    try {
      const stop = new AbortController();
      const lines: string[] = [];
      const done = run(agent, { argv: ["--dial-out", `http://${gw.address}`, "--bot", "named", "--version", "9"], env: { PARLEY_TOKEN: "tok" }, signal: stop.signal, out: (l) => lines.push(l) });
      const s = await gw.session(0);
      assert.deepEqual([s.hello.bot, s.hello.version], ["named", "9"]);
      assert.equal((await s.act({ observation: { turn: 4 } })).kind.case, "act");
      stop.abort();
      assert.equal(await done, 0);
      assert.deepEqual(lines, [`dialling http://${gw.address} as bot named version 9`, "connected as bot:blue/named (team blue)"]);
    } finally {
      await gw.close();
    }
  });

  test("a refused token is exit status 1, a usage error 2, --help 0", async () => {
    const gw = await startGateway("right");
    const errs: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (errs.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      assert.equal(await run(agent, { argv: ["--dial-out", gw.address], env: { PARLEY_TOKEN: "wrong" }, out: () => {} }), 1);
      assert.match(errs.join(""), /bot: \[unauthenticated\] bad token/);
      assert.equal(await run(agent, { argv: ["--bogus"], env: {}, out: () => {} }), 2);
      assert.match(errs.join(""), /Unknown option '--bogus'/);
      const help: string[] = [];
      assert.equal(await run(agent, { argv: ["--help"], env: {}, out: (l) => help.push(l), program: "mybot" }), 0);
      assert.match(help.join(""), /^Usage: mybot \[--listen HOST:PORT \| --dial-out URL\]/);
    } finally {
      process.stderr.write = write;
      await gw.close();
    }
  });
});
