// A complete Parley agent in plain Node.js, written from proto/ alone (no Parley SDK):
// @grpc/grpc-js serves it, @grpc/proto-loader reads the .proto files at start-up.
//
// It plays every game legally from the observation's generic fields (legal_moves,
// required_messages, choices, proposal_forms, proposal_bounds), and reads one game's own view
// (buysell) to show how presence of an optional field is tested. It serves
// parley.agent.v1.AgentService and grpc.health.v1.Health on --listen, or dials out to a
// gateway (--dial-out URL --token T --bot NAME) and answers the same calls over
// parley.botlink.v1.BotLinkService/Connect. Act gets whole observations; Play (one stream per
// seat, kept from match to match) gets each call less what the call before carried, which
// restore() puts back. It reads no briefing, and says so, so the referee writes none for it.
//
//   npm ci --prefix examples/minimal-node
//   node examples/minimal-node/bot.js --listen 127.0.0.1:50092
//
// PARLEY_PROTO names the folder holding parley/ and grpc/ (default: the repository's proto/).

import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

const here = path.dirname(fileURLToPath(import.meta.url));
const protoDir = process.env.PARLEY_PROTO || path.join(here, "..", "..", "proto");

// keepCase: field names as in the .proto (match_id, not matchId). longs: String: int64 values
// (amounts, prices) arrive as decimal strings, never as lossy numbers; convert with BigInt or
// Number before comparing ("10" < "9" as strings). enums: String: "MOVE_KIND_SAY", not 6.
// defaults: true fills unset plain fields with their zero values but leaves an unset
// `optional` field out, so presence is `field !== undefined`. oneofs: true adds, for each
// oneof, a field naming the member that is set (observation.view === "buysell").
const loaded = protoLoader.loadSync(["parley/agent/v1/agent.proto", "parley/botlink/v1/botlink.proto", "grpc/health/v1/health.proto"], {
  includeDirs: [protoDir],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const proto = grpc.loadPackageDefinition(loaded);
const AGENT_SERVICE = "parley.agent.v1.AgentService";
const NAME = "minimal-node";
const VERSION = "1";

function describe() {
  // No games listed: this bot says it plays any game. Its Play side takes match after match on
  // a stream, and it never reads the briefing.
  return {
    agent: { name: NAME, version: VERSION, author: "examples", description: "Plays a legal move in every game from the observation's generic fields." },
    observing: { streams_span_matches: true, skips_briefing: true },
  };
}

/**
 * The whole observation of a Play call: what it left out as the stream's previous call's
 * (same_as_before) put back from prev, that call's whole observation (undefined for none). A
 * call with no same_as_before is whole (every match's first call is).
 */
function restore(req, prev) {
  const obs = req.act.observation;
  const same = req.same_as_before;
  if (!same) return obs;
  if (!prev) throw new Error("the call leaves out what no earlier call carried");
  if (same.seats) obs.seats = prev.seats;
  // A count of bytes of the UTF-8 text.
  if (same.briefing_bytes > 0) obs.briefing = Buffer.concat([Buffer.from(prev.briefing).subarray(0, same.briefing_bytes), Buffer.from(obs.briefing)]).toString();
  if (same.history) obs.history = [...prev.history.slice(same.history_from), ...obs.history];
  return obs;
}

/** Answers the calls of one Play stream in order, each with what Act would answer. */
function play(stream) {
  let prev;
  stream.on("data", (req) => {
    try {
      prev = restore(req, prev);
    } catch (err) {
      prev = undefined; // the referee sends the call again, whole
      stream.write({ call: req.call, error_code: grpc.status.INVALID_ARGUMENT, error_message: err.message });
      return;
    }
    stream.write({ call: req.call, act: { action: act(prev), turn: prev.turn } });
  });
  stream.on("end", () => stream.end());
  stream.on("error", () => {}); // the referee cancelled the stream
}

/** One legal action for the observation. */
function act(obs) {
  const legal = new Set(obs.legal_moves);
  let move;
  if (legal.has("MOVE_KIND_SAY")) move = { say: {} };
  else if (legal.has("MOVE_KIND_CHOOSE") && obs.choices.length > 0) move = { choose: { option: obs.choices[0].id } };
  else if (legal.has("MOVE_KIND_ACCEPT") && worthAccepting(obs)) move = { accept: {} };
  else if (legal.has("MOVE_KIND_PROPOSE") && (obs.proposal_forms.length > 0 || obs.proposal_bounds.length > 0)) move = { propose: { proposal: proposal(obs) } };
  else if (legal.has("MOVE_KIND_PASS")) move = { pass: {} };
  else if (legal.has("MOVE_KIND_ACCEPT")) move = { accept: {} };
  else move = { reject: {} };
  // Exactly one message per required slot, addressed exactly as the slot says.
  const messages = obs.required_messages.map((slot) => ({ to: slot.to, text: "Hello from a minimal bot." }));
  return { move, messages, private_reasoning: "the first legal move on my list" };
}

/** In buysell, accept only a price that does not lose money; anything elsewhere. */
function worthAccepting(obs) {
  if (obs.view !== "buysell") return true;
  const v = obs.buysell;
  // standing_price is optional: a standing offer of "0" and no offer at all differ only by
  // presence, never by value.
  if (v.standing_price === undefined) return false;
  const price = BigInt(v.standing_price);
  const value = BigInt(v.private_value);
  return v.role === "seller" ? price >= value : price <= value;
}

/**
 * Terms from the first proposal form (or the bounds): a deal choosing the first option of
 * every issue, or an allocation with every amount in its range and every total met. Every
 * amount a bound lists is sent, the amounts the rules fix (min = max) too.
 */
function proposal(obs) {
  const form = obs.proposal_forms[0];
  if (form && form.issues.length > 0) {
    return { deal: { choices: form.issues.map((i) => ({ issue: i.id, option: i.options[0].id })) } };
  }
  const bounds = form ? form.bounds : obs.proposal_bounds;
  // The middle of each range; the minimum where no upper limit is known (max_unknown: the
  // other seat's holdings are hidden, and asking for too much is refused).
  const amounts = bounds.map((b) => (b.max_unknown ? BigInt(b.min) : (BigInt(b.min) + BigInt(b.max)) / 2n));
  for (const total of form ? form.totals : []) {
    const idx = bounds.flatMap((b, i) => (b.side === total.side && b.resource === total.resource ? [i] : []));
    let missing = BigInt(total.total) - idx.reduce((s, i) => s + amounts[i], 0n);
    for (const i of idx) {
      // Add what is missing (or take away the excess), bound by bound.
      const room = missing > 0n ? BigInt(bounds[i].max) - amounts[i] : BigInt(bounds[i].min) - amounts[i];
      const step = missing > 0n ? (missing < room ? missing : room) : missing > room ? missing : room;
      amounts[i] += step;
      missing -= step;
    }
  }
  const shares = new Map();
  bounds.forEach((b, i) => {
    if (!shares.has(b.seat)) shares.set(b.seat, { seat: b.seat, gives: {}, receives: {} });
    const side = b.side === "SHARE_SIDE_GIVES" ? "gives" : "receives";
    shares.get(b.seat)[side][b.resource] = amounts[i].toString(); // int64 as a string
  });
  return { allocation: { shares: [...shares.values()] } };
}

function serve(listen) {
  const server = new grpc.Server();
  server.addService(proto.parley.agent.v1.AgentService.service, {
    Act: (call, done) => done(null, { action: act(call.request.observation), turn: call.request.observation.turn }),
    Describe: (_call, done) => done(null, describe()),
    Play: play,
  });
  server.addService(proto.grpc.health.v1.Health.service, {
    // SERVING for the whole server ("") and for the agent service; Parley asks both.
    Check: (call, done) => {
      const s = call.request.service;
      if (s !== "" && s !== AGENT_SERVICE) return done({ code: grpc.status.NOT_FOUND, details: `unknown service ${s}` });
      done(null, { status: "SERVING" });
    },
    Watch: (call) => call.emit("error", { code: grpc.status.UNIMPLEMENTED, details: "Watch is not served" }),
  });
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    console.log(`listening on ${listen.replace(/:\d+$/, "")}:${port}`);
  });
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.tryShutdown(() => process.exit(0)));
}

/** The CallResult for one Call from the gateway. */
function answer(call) {
  if (call.kind === "act") return { call_id: call.call_id, act: { action: act(call.act.observation), turn: call.act.observation.turn } };
  if (call.kind === "describe") return { call_id: call.call_id, describe: describe() };
  return { call_id: call.call_id, error: `this bot does not know the call ${call.kind}` };
}

/**
 * Hold a link open to the gateway and answer its calls until it closes. The gateway speaks
 * gRPC over HTTP/2 without TLS on its HTTP port (http://host:port), so the channel is an
 * insecure one to host:port; the team token goes in the metadata.
 */
function dialOut(gateway, token, bot) {
  const target = gateway.replace(/^https?:\/\//, "").replace(/\/+$/, "");
  const client = new proto.parley.botlink.v1.BotLinkService(target, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  const stream = client.Connect(md);
  stream.write({ hello: { bot, version: VERSION } });
  stream.on("data", (msg) => {
    if (msg.msg === "welcome") console.log(`connected as ${msg.welcome.address}`);
    else if (msg.msg === "call") stream.write({ result: answer(msg.call) });
  });
  stream.on("error", (err) => {
    console.error(`link closed: ${grpc.status[err.code]}: ${err.details}`);
    process.exit(1);
  });
  stream.on("end", () => process.exit(0));
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
}

const { values } = parseArgs({
  options: {
    listen: { type: "string", default: "127.0.0.1:50092" },
    "dial-out": { type: "string", default: process.env.PARLEY_DIAL_OUT ?? "" },
    token: { type: "string", default: process.env.PARLEY_TOKEN ?? "" },
    bot: { type: "string", default: process.env.PARLEY_BOT ?? "" },
  },
});
if (values["dial-out"]) {
  if (!values.token || !values.bot) {
    console.error("--dial-out needs --token (or $PARLEY_TOKEN) and --bot");
    process.exit(2);
  }
  dialOut(values["dial-out"], values.token, values.bot);
} else {
  serve(values.listen);
}
