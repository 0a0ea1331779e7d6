// A gateway's BotLinkService for the dial-out tests: a real gRPC server on loopback whose
// sessions the test drives (send a Call, await its CallResult, end the stream, refuse a token).
// The Go gateway's own service is exercised by the Go end-to-end test.

import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  BotLinkService,
  type CallResult,
  CallSchema,
  type ConnectRequest,
  type ConnectResponse,
  ConnectResponseSchema,
  type Hello,
} from "../src/gen/parley/botlink/v1/botlink_pb.js";
import { type ActRequest, ActRequestSchema } from "../src/gen/parley/agent/v1/agent_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";

/** A queue one side pushes to and the other awaits. */
class Queue<T> {
  private items: T[] = [];
  private waiters: Array<(v: T | undefined) => void> = [];
  private ended = false;
  push(v: T) {
    const w = this.waiters.shift();
    if (w) w(v);
    else this.items.push(v);
  }
  end() {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }
  next(): Promise<T | undefined> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((r) => this.waiters.push(r));
  }
}

/** One bot session on the fake gateway. */
export class Session {
  readonly results = new Map<string, (r: CallResult) => void>();
  readonly order: string[] = [];
  readonly out = new Queue<ConnectResponse>();
  closed = false;
  private seq = 0;
  constructor(
    readonly hello: Hello,
    readonly authorization: string | null,
  ) {}

  /** Sends an act Call and resolves with the bot's CallResult. */
  act(req: MessageInitShape<typeof ActRequestSchema> | ActRequest, deadline?: Date): Promise<CallResult> {
    return this.call({ case: "act", value: create(ActRequestSchema, req as MessageInitShape<typeof ActRequestSchema>) }, deadline);
  }

  /** Sends a describe Call and resolves with the bot's CallResult. */
  describe(): Promise<CallResult> {
    return this.call({ case: "describe", value: {} });
  }

  private call(kind: MessageInitShape<typeof CallSchema>["kind"], deadline?: Date): Promise<CallResult> {
    const callId = `c${++this.seq}`;
    const done = new Promise<CallResult>((resolve) => this.results.set(callId, resolve));
    this.out.push(
      create(ConnectResponseSchema, {
        msg: { case: "call", value: { callId, kind, deadline: deadline ? timestampFromDate(deadline) : undefined } },
      }),
    );
    return done;
  }

  /** Ends the stream from the gateway's side (a restart, say). */
  end() {
    this.out.end();
  }
}

export interface FakeGateway {
  address: string;
  /** Resolves with the n-th session (0-based) once its Hello arrived. */
  session(n: number): Promise<Session>;
  /** Hellos seen, including refused ones. */
  hellos: Hello[];
  /** When set, sessions are refused with this code after the Hello. */
  refuse?: Code;
  close(): Promise<void>;
}

export async function startGateway(token = "team-token"): Promise<FakeGateway> {
  const sessions: Session[] = [];
  const waiting = new Map<number, Array<(s: Session) => void>>();
  const gw: FakeGateway = {
    address: "",
    hellos: [],
    session(n) {
      if (sessions[n]) return Promise.resolve(sessions[n]);
      return new Promise((resolve) => waiting.set(n, [...(waiting.get(n) ?? []), resolve]));
    },
    close: async () => {},
  };

  async function* connect(requests: AsyncIterable<ConnectRequest>, ctx: HandlerContext): AsyncIterable<ConnectResponse> {
    const it = requests[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.msg.case !== "hello") throw new ConnectError("first message must be a Hello", Code.InvalidArgument);
    const hello = first.value.msg.value;
    gw.hellos.push(hello);
    const auth = ctx.requestHeader.get("authorization");
    if (auth !== `Bearer ${token}`) throw new ConnectError("bad token", Code.Unauthenticated);
    if (gw.refuse !== undefined) throw new ConnectError("refused", gw.refuse);
    const s = new Session(hello, auth);
    sessions.push(s);
    for (const w of waiting.get(sessions.length - 1) ?? []) w(s);
    yield create(ConnectResponseSchema, { msg: { case: "welcome", value: { team: "blue", address: `bot:blue/${hello.bot}` } } });
    // Results arrive while calls are being sent: read them on the side.
    void (async () => {
      try {
        for (let r = await it.next(); !r.done; r = await it.next()) {
          if (r.value.msg.case !== "result") continue;
          const res = r.value.msg.value;
          s.order.push(res.callId);
          s.results.get(res.callId)?.(res);
          s.results.delete(res.callId);
        }
      } catch {
        // The stream was cut.
      }
      s.closed = true;
      s.out.end();
    })();
    for (let m = await s.out.next(); m !== undefined; m = await s.out.next()) yield m;
  }

  const server = http2.createServer(
    connectNodeAdapter({
      grpc: true,
      connect: false,
      grpcWeb: false,
      routes: (router) => router.service(BotLinkService, { connect }),
    }),
  );
  const open = new Set<http2.Http2Session>();
  server.on("session", (s) => {
    open.add(s);
    s.once("close", () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  gw.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sessions) s.end();
      for (const s of open) s.destroy();
      server.close(() => resolve());
    });
  return gw;
}
