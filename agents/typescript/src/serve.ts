// serve(): parley.agent.v1.AgentService as a gRPC server (HTTP/2 without TLS, which is what the
// referee's grpc-go client speaks to a "grpc://host:port" agent), with the standard health check.

import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AgentService } from "./gen/parley/agent/v1/agent_pb.js";
import { type Agent, type Logger, handleAct, handleDescribe, handlePlay, stderrLogger } from "./agent.js";
import { addHealth } from "./health.js";

export interface ServeOptions {
  /** host:port to listen on; port 0 picks a free one. Default 127.0.0.1:50051. */
  address?: string;
  /** Largest request read, in bytes. Default 16 MiB. */
  readMaxBytes?: number;
  /** Where errors in the author's code are reported. Default: stderr. */
  log?: Logger;
}

/** A running agent server. */
export interface AgentServer {
  /** host:port actually bound (the real port when 0 was asked for). */
  address: string;
  /** Stops accepting calls; calls in flight get graceMs to finish, then are cut. */
  close(graceMs?: number): Promise<void>;
}

/** Splits "host:port" (or "[v6]:port"); the host defaults to 127.0.0.1. */
export function parseHostPort(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address.trim());
  if (!m) throw new Error(`parley: address ${JSON.stringify(address)} is not host:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`parley: port ${port} out of range`);
  return { host: m[1] ?? (m[2] || "127.0.0.1"), port };
}

/** The routes of an agent server: AgentService plus health. For embedding in a server of your own. */
export function agentRoutes(agent: Agent, log: Logger = stderrLogger): (router: ConnectRouter) => void {
  if (typeof agent?.act !== "function") throw new TypeError("parley: the agent needs an act(observation, context) method");
  return (router) => {
    router.service(AgentService, {
      act: (req, ctx: HandlerContext) => {
        const ms = ctx.timeoutMs();
        return handleAct(agent, req, { signal: ctx.signal, deadline: ms === undefined ? undefined : new Date(Date.now() + ms) }, log);
      },
      describe: () => handleDescribe(agent, log),
      play: (calls, ctx: HandlerContext) => handlePlay(agent, calls, ctx.signal, log),
    });
    addHealth(router, [AgentService.typeName]);
  };
}

/**
 * Starts serving agent over gRPC and resolves once it accepts calls. Does not print or handle
 * signals (run() does both); stop it with close().
 */
export async function serve(agent: Agent, options: ServeOptions = {}): Promise<AgentServer> {
  const { host, port } = parseHostPort(options.address ?? "127.0.0.1:50051");
  const handler = connectNodeAdapter({
    routes: agentRoutes(agent, options.log ?? stderrLogger),
    grpc: true,
    grpcWeb: false,
    connect: false,
    readMaxBytes: options.readMaxBytes ?? 16 << 20,
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    address: `${shownHost}:${bound.port}`,
    close(graceMs = 5000) {
      return new Promise<void>((resolve) => {
        const cut = setTimeout(() => sessions.forEach((s) => s.destroy()), graceMs);
        cut.unref();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        // Ask clients to stop sending new calls; calls in flight finish.
        sessions.forEach((s) => s.close());
      });
    },
  };
}
