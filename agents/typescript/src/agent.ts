// What an agent is to the SDK, and the two calls every transport makes of it (Act and Describe),
// independent of how they arrive: a gRPC server (serve) or the gateway's stream (dialOut).

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ActRequest,
  type ActResponse,
  ActResponseSchema,
  type Action,
  ActionSchema,
  type DescribeResponse,
  DescribeResponseSchema,
  type HistoryEntry,
  type Observation,
  type Observing,
  ObservingSchema,
  type PlayRequest,
  type PlayResponse,
  PlayResponseSchema,
} from "./gen/parley/agent/v1/agent_pb.js";
import { type AgentInfo, AgentInfoSchema, type Move, type SeatInfo } from "./gen/parley/game/v1/game_pb.js";

/** What act() may use besides the observation. */
export interface ActContext {
  /** Aborted when the referee stops waiting (its deadline passed, or it gave up) or on shutdown. */
  signal: AbortSignal;
  /** When the answer must arrive, when known (also in observation.deadline). */
  deadline?: Date;
}

/**
 * An agent: one object with act(). Describe it with describe(), or with the fields name,
 * version, author, games and description (the name defaults to the class name).
 *
 * act() may run for several matches at once (one call per seat to move). Keep per-match state
 * in Action.privateNotes (it comes back in Observation.notes, to this seat only), not on the
 * object.
 */
export interface Agent {
  act(observation: Observation, context: ActContext): Action | Move | Promise<Action | Move>;
  describe?(): AgentInfo | MessageInitShape<typeof AgentInfoSchema> | Promise<AgentInfo | MessageInitShape<typeof AgentInfoSchema>>;
  name?: string;
  version?: string;
  author?: string;
  games?: string[];
  description?: string;
  /**
   * True when act() never reads observation.briefing (it acts on the typed fields): the
   * referee then writes none for it. Never for an agent that acts on the text (a language model).
   */
  skipsBriefing?: boolean;
}

/** Longest error text sent back to the referee; the stack goes to the agent's own stderr. */
const MAX_DETAIL = 300;

/** The short text of an error thrown by the author's code, as the referee will record it. */
export function shortError(what: string, err: unknown): string {
  const kind = err instanceof Error ? err.name : typeof err;
  const msg = err instanceof Error ? err.message : String(err);
  const text = `agent ${what} threw ${kind}: ${msg}`;
  return text.length <= MAX_DETAIL ? text : text.slice(0, MAX_DETAIL - 3) + "...";
}

/** AgentInfo from describe() or from the agent's fields. */
export async function describeAgent(agent: Agent): Promise<AgentInfo> {
  if (typeof agent.describe === "function") {
    const info = await agent.describe();
    if (info === null || typeof info !== "object") throw new TypeError("describe() must return an AgentInfo");
    return (info as AgentInfo).$typeName === "parley.game.v1.AgentInfo" ? (info as AgentInfo) : create(AgentInfoSchema, info);
  }
  return create(AgentInfoSchema, {
    name: agent.name || className(agent),
    version: agent.version ?? "",
    author: agent.author ?? "",
    games: agent.games ?? [],
    description: agent.description ?? "",
  });
}

/** The Action an act() result stands for: an Action, or a bare Move. */
export function asAction(result: unknown): Action {
  const t = (result as { $typeName?: string } | null | undefined)?.$typeName;
  if (t === "parley.agent.v1.Action") return result as Action;
  if (t === "parley.game.v1.Move") return create(ActionSchema, { move: result as Move });
  throw new TypeError(`act() must return an Action (or a Move), not ${t ?? (result === null ? "null" : typeof result)}`);
}

/** How the SDK reports an author's error: to stderr, with the stack. */
export type Logger = (msg: string, err?: unknown) => void;

export const stderrLogger: Logger = (msg, err) => {
  const stack = err instanceof Error ? `\n${err.stack ?? err.message}` : err === undefined ? "" : ` ${String(err)}`;
  process.stderr.write(`parley-agent: ${msg}${stack}\n`);
};

/**
 * Answers an ActRequest: the author's action with the observation's turn echoed (so an answer
 * to a stale request is refused rather than played). A throw in the author's code becomes a
 * ConnectError with code INTERNAL and a short message.
 */
export async function handleAct(agent: Agent, req: ActRequest, ctx: ActContext, log: Logger): Promise<ActResponse> {
  const obs = req.observation;
  if (!obs) throw new ConnectError("act request without an observation", Code.InvalidArgument);
  let act: Action;
  try {
    act = asAction(await agent.act(obs, ctx));
  } catch (err) {
    log(`act() failed: match ${obs.matchId} seat ${obs.seat} turn ${obs.turn}`, err);
    throw new ConnectError(shortError("act()", err), Code.Internal);
  }
  return create(ActResponseSchema, { action: act, turn: obs.turn });
}

/**
 * How agent, served by this SDK, takes its observations: put back together from what each Play
 * call leaves out, on streams that span matches; without a briefing when it says so.
 */
export function observing(agent: Agent): Observing {
  return create(ObservingSchema, { streamsSpanMatches: true, skipsBriefing: agent.skipsBriefing === true });
}

/** Answers a DescribeRequest; a throw in describe() becomes INTERNAL. */
export async function handleDescribe(agent: Agent, log: Logger): Promise<DescribeResponse> {
  try {
    return create(DescribeResponseSchema, { agent: await describeAgent(agent), observing: observing(agent) });
  } catch (err) {
    log("describe() failed", err);
    throw new ConnectError(shortError("describe()", err), Code.Internal);
  }
}

function className(agent: object): string {
  const n = agent.constructor?.name;
  return n && n !== "Object" ? n : "agent";
}

/** What a Play call's whole observation carried that the next call may leave out. */
export interface Carried {
  seats: SeatInfo[];
  briefing: Buffer; // same_as_before counts bytes
  history: HistoryEntry[];
}

/** A Play call that leaves out what its stream's earlier calls did not carry. */
export class PlayBroken extends Error {}

/**
 * Puts back into req's observation what the call left out as the previous call's
 * (PlayRequest.sameAsBefore), prev being what that call carried (undefined on a stream's first
 * call), and returns what this call carries, for the next. Throws PlayBroken when the call
 * cannot be followed; the referee then sends it again, whole.
 */
export function restore(req: PlayRequest, prev: Carried | undefined): Carried {
  const obs = req.act?.observation;
  if (!obs) throw new PlayBroken("play: the call carries no observation");
  const same = req.sameAsBefore;
  let briefing: Buffer | undefined;
  if (same) {
    if (!prev) throw new PlayBroken("play: the call leaves out what no earlier call of the stream carried");
    if (same.seats) obs.seats = prev.seats;
    if (same.briefingBytes > 0) {
      if (same.briefingBytes > prev.briefing.length) throw new PlayBroken(`play: the call keeps ${same.briefingBytes} bytes of a ${prev.briefing.length}-byte briefing`);
      briefing = Buffer.concat([prev.briefing.subarray(0, same.briefingBytes), Buffer.from(obs.briefing, "utf8")]);
      obs.briefing = briefing.toString("utf8");
    }
    if (same.history) {
      if (same.historyFrom > prev.history.length) throw new PlayBroken(`play: the call keeps history from entry ${same.historyFrom} of ${prev.history.length}`);
      obs.history = [...prev.history.slice(same.historyFrom), ...obs.history];
    }
  }
  return { seats: obs.seats, briefing: briefing ?? Buffer.from(obs.briefing, "utf8"), history: obs.history };
}

/**
 * Serves one Play stream: each call's observation put back together (restore), answered by
 * handleAct in the order the calls come. A call's signal aborts when the stream ends or when
 * the observation's time limit, counted from the call's arrival, has passed.
 */
export async function* handlePlay(agent: Agent, calls: AsyncIterable<PlayRequest>, signal: AbortSignal, log: Logger): AsyncGenerator<PlayResponse> {
  let prev: Carried | undefined;
  for await (const req of calls) {
    const out = create(PlayResponseSchema, { call: req.call });
    try {
      prev = restore(req, prev);
    } catch (err) {
      prev = undefined;
      out.errorCode = Code.InvalidArgument;
      out.errorMessage = err instanceof Error ? err.message : String(err);
      yield out;
      continue;
    }
    const limit = req.act?.observation?.timeLimit;
    const ms = limit ? Number(limit.seconds) * 1000 + limit.nanos / 1e6 : 0;
    const callSignal = ms > 0 ? AbortSignal.any([signal, AbortSignal.timeout(ms)]) : signal;
    try {
      out.act = await handleAct(agent, req.act!, { signal: callSignal, deadline: ms > 0 ? new Date(Date.now() + ms) : undefined }, log);
    } catch (err) {
      const e = ConnectError.from(err);
      out.errorCode = e.code;
      out.errorMessage = e.rawMessage;
    }
    yield out;
  }
}
