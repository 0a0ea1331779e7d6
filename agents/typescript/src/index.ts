// Parley agent SDK for TypeScript: write one object with act(), then run(agent) serves it over
// gRPC (--listen) or dials out to the gateway (--dial-out URL, with the team token in PARLEY_TOKEN).

export { type ActContext, type Agent, type Carried, type Logger, PlayBroken, asAction, describeAgent, observing, restore, shortError, stderrLogger } from "./agent.js";
export { type AgentServer, type ServeOptions, agentRoutes, parseHostPort, serve } from "./serve.js";
export { type DialOutOptions, FATAL_LINK_CODES, dialOut, gatewayUrl } from "./dialout.js";
export { type RunConfig, type RunOptions, run, runConfig } from "./run.js";
export { HealthService, HealthStatus, addHealth } from "./health.js";
export * from "./moves.js";

// The generated contract most agents need, re-exported (the rest is under ./gen/).
export * as agentv1 from "./gen/parley/agent/v1/agent_pb.js";
export * as gamev1 from "./gen/parley/game/v1/game_pb.js";
export * as ultimatumv1 from "./gen/parley/games/ultimatum/v1/ultimatum_pb.js";
export * as coalitionv1 from "./gen/parley/games/coalition/v1/coalition_pb.js";
export * as botlinkv1 from "./gen/parley/botlink/v1/botlink_pb.js";
export type { Action, Observation, HistoryEntry } from "./gen/parley/agent/v1/agent_pb.js";
export { MoveKind, ShareSide, RejectionCode } from "./gen/parley/game/v1/game_pb.js";
export type { Allocation, AgentInfo, Bound, Message, MessageSlot, Move, Proposal, ProposalForm, SeatShare } from "./gen/parley/game/v1/game_pb.js";
