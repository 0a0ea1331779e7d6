// dialOut(): the bot connects to the gateway's parley.botlink.v1.BotLinkService (one
// bidirectional gRPC stream, authenticated by the team token) and answers the referee's calls
// over it, for bots that cannot accept connections (behind NAT or a firewall).

import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  BotLinkService,
  type Call,
  type CallResult,
  CallResultSchema,
  type ConnectRequest,
  ConnectRequestSchema,
  type Welcome,
} from "./gen/parley/botlink/v1/botlink_pb.js";
import { type Agent, type Logger, describeAgent, handleAct, handleDescribe, stderrLogger } from "./agent.js";

export interface DialOutOptions {
  /** The gateway: "host:port" (plain HTTP/2) or a URL, "http://host:port" or "https://host". */
  gateway: string;
  /** The team token (`parley admin team add NAME` prints it). Keep it out of argv: use PARLEY_TOKEN. */
  token: string;
  /** Name of the registered bot this session serves. Default: the agent's described name. */
  bot?: string;
  /** Version the bot runs; when set, the gateway refuses the session unless it is the registered one. Default: empty, not checked. */
  version?: string;
  /** Stops the link (calls in flight get graceMs to finish). */
  signal?: AbortSignal;
  /** Called on every Welcome, i.e. after each (re)connection. */
  onWelcome?: (welcome: Welcome) => void;
  /** Called when the link drops and will be retried. */
  onRetry?: (err: ConnectError, delayMs: number) => void;
  /** First and largest wait between reconnections. Default 250 ms and 30 s (doubling, with jitter). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Time calls in flight get to finish once signal aborts. Default 5 s. */
  graceMs?: number;
  /** Where errors in the author's code are reported. Default: stderr. */
  log?: Logger;
}

/**
 * Codes after which reconnecting cannot help: a wrong or revoked token, a bot of another team,
 * a bot that is not registered (or retired) or runs another version than the registered one.
 * dialOut() rejects with them instead of retrying.
 */
export const FATAL_LINK_CODES: readonly Code[] = [
  Code.Unauthenticated,
  Code.PermissionDenied,
  Code.NotFound,
  Code.FailedPrecondition,
  Code.InvalidArgument,
  Code.Unimplemented, // a gateway without BotLinkService
];

/** How long a stopping bot waits for the gateway to end the stream it half-closed. */
const HALF_CLOSE_WAIT_MS = 1000;

/** The base URL for a gateway given as host:port or URL. */
export function gatewayUrl(gateway: string): string {
  const g = gateway.trim().replace(/\/+$/, "");
  if (!g) throw new Error("parley: no gateway address");
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(g) ? g : `http://${g}`;
}

/**
 * Serves agent over the gateway's BotLinkService until options.signal aborts (then resolves),
 * reconnecting with exponential backoff whenever the link drops. Rejects with a ConnectError
 * when the gateway refuses the session for good (see FATAL_LINK_CODES) or options are invalid.
 */
export async function dialOut(agent: Agent, options: DialOutOptions): Promise<void> {
  if (typeof agent?.act !== "function") throw new TypeError("parley: the agent needs an act(observation, context) method");
  if (!options.token) throw new Error("parley: dial-out needs the team token (PARLEY_TOKEN)");
  const info = await describeAgent(agent);
  const bot = options.bot || info.name;
  const version = options.version ?? "";
  const log = options.log ?? stderrLogger;
  const minDelay = options.minBackoffMs ?? 250;
  const maxDelay = Math.max(minDelay, options.maxBackoffMs ?? 30_000);
  const stop = options.signal ?? new AbortController().signal;
  const transport = createGrpcTransport({
    baseUrl: gatewayUrl(options.gateway),
    // A dead gateway or a dropped NAT mapping is noticed within ~25 s even with no calls.
    pingIntervalMs: 15_000,
    pingTimeoutMs: 10_000,
  });
  const client = createClient(BotLinkService, transport);

  let delay = minDelay;
  while (!stop.aborted) {
    const link = new Link(agent, log, options.graceMs ?? 5000);
    let err: ConnectError;
    try {
      await link.run(client, { bot, version, token: options.token, stop, onWelcome: options.onWelcome });
      err = new ConnectError("the gateway closed the link", Code.Unavailable);
    } catch (e) {
      err = ConnectError.from(e);
    }
    if (stop.aborted) return;
    if (FATAL_LINK_CODES.includes(err.code)) throw err;
    if (link.welcomed) delay = minDelay; // it worked for a while: start the backoff again
    const wait = Math.round(delay * (0.5 + Math.random() / 2));
    options.onRetry?.(err, wait);
    await sleep(wait, stop);
    delay = Math.min(maxDelay, delay * 2);
  }
}

/** One session on the stream: Hello, Welcome, then Calls answered concurrently. */
class Link {
  welcomed = false;
  private readonly out = new Outbox<ConnectRequest>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly calls = new AbortController();

  constructor(
    private readonly agent: Agent,
    private readonly log: Logger,
    private readonly graceMs: number,
  ) {}

  async run(
    client: ReturnType<typeof createClient<typeof BotLinkService>>,
    o: { bot: string; version: string; token: string; stop: AbortSignal; onWelcome?: (w: Welcome) => void },
  ): Promise<void> {
    const stream = new AbortController();
    const timers: NodeJS.Timeout[] = [];
    const onStop = () => {
      // Nothing to answer: end the stream now.
      if (this.inflight.size === 0) return stream.abort();
      // Calls in flight get graceMs to answer. Then the bot half-closes the stream, so that the
      // results are sent before it ends; a gateway that does not end it then is cut after a second.
      timers.push(setTimeout(() => stream.abort(), this.graceMs));
      void Promise.allSettled([...this.inflight]).then(() => {
        this.out.close();
        timers.push(setTimeout(() => stream.abort(), HALF_CLOSE_WAIT_MS));
      });
    };
    o.stop.addEventListener("abort", onStop, { once: true });
    this.out.push(create(ConnectRequestSchema, { msg: { case: "hello", value: { bot: o.bot, version: o.version } } }));
    try {
      const responses = client.connect(this.out, { headers: { authorization: `Bearer ${o.token}` }, signal: stream.signal });
      for await (const res of responses) {
        switch (res.msg.case) {
          case "welcome":
            this.welcomed = true;
            o.onWelcome?.(res.msg.value);
            break;
          case "call": {
            const p = this.answer(res.msg.value).finally(() => this.inflight.delete(p));
            this.inflight.add(p);
            break;
          }
          default:
          // A kind this SDK does not know (a newer gateway): nothing to answer.
        }
      }
    } finally {
      timers.forEach(clearTimeout);
      o.stop.removeEventListener("abort", onStop);
      this.calls.abort();
      this.out.close();
    }
  }

  private async answer(call: Call): Promise<void> {
    const deadline = call.deadline ? timestampDate(call.deadline) : undefined;
    const ctl = new AbortController();
    const onEnd = () => ctl.abort();
    this.calls.signal.addEventListener("abort", onEnd, { once: true });
    const timer = deadline ? setTimeout(() => ctl.abort(), Math.max(0, deadline.getTime() - Date.now())) : undefined;
    let result: CallResult;
    try {
      switch (call.kind.case) {
        case "act":
          result = create(CallResultSchema, {
            callId: call.callId,
            kind: { case: "act", value: await handleAct(this.agent, call.kind.value, { signal: ctl.signal, deadline }, this.log) },
          });
          break;
        case "describe":
          result = create(CallResultSchema, { callId: call.callId, kind: { case: "describe", value: await handleDescribe(this.agent, this.log) } });
          break;
        default:
          result = create(CallResultSchema, { callId: call.callId, kind: { case: "error", value: "call of a kind this bot does not know" } });
      }
    } catch (err) {
      result = create(CallResultSchema, { callId: call.callId, kind: { case: "error", value: ConnectError.from(err).rawMessage } });
    } finally {
      clearTimeout(timer);
      this.calls.signal.removeEventListener("abort", onEnd);
    }
    this.out.push(create(ConnectRequestSchema, { msg: { case: "result", value: result } }));
  }
}

/** An async iterable fed by push() until close(): the request side of the stream. */
class Outbox<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake?: () => void;
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      while (this.items.length > 0) yield this.items.shift()!;
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
