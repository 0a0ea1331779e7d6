// run(): the one switch between the two modes, from the command line and the environment.
//
//   serve (default)   --listen HOST:PORT   or PARLEY_LISTEN     (default 127.0.0.1:50051)
//   dial out          --dial-out URL       or PARLEY_DIAL_OUT, with
//                     --token TOKEN        or PARLEY_TOKEN      (better the variable: `ps` shows argv)
//                     --bot NAME           or PARLEY_BOT        (default: the agent's name)
//                     --version V          registered version, checked by the gateway when given
//
// The same switch as the Go SDK's sdk.Mode and the Python SDK's add_mode_arguments. A flag
// wins over its variable.

import { parseArgs } from "node:util";
import { type Agent, type Logger, describeAgent, stderrLogger } from "./agent.js";
import { dialOut } from "./dialout.js";
import { serve } from "./serve.js";

export interface RunOptions {
  /** Arguments to parse. Default: process.argv.slice(2). */
  argv?: string[];
  /** Environment to read PARLEY_* from. Default: process.env. */
  env?: Record<string, string | undefined>;
  /** Listen address when neither --listen nor PARLEY_LISTEN is given. Default 127.0.0.1:50051. */
  defaultListen?: string;
  /** Program name for --help. */
  program?: string;
  /** Stops the agent (besides SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Where the status lines ("listening on ...", "connected as ...") go. Default: stdout. */
  out?: (line: string) => void;
  log?: Logger;
}

/** The mode and settings run() picked. */
export type RunConfig =
  | { mode: "serve"; listen: string; graceMs: number }
  | { mode: "dial"; gateway: string; token: string; bot?: string; version: string; graceMs: number };

const USAGE = `Serves a Parley agent over gRPC, or dials out to a Parley gateway.

Options:
  --listen HOST:PORT   serve parley.agent.v1.AgentService here; port 0 picks a free one
                       [$PARLEY_LISTEN] (default %LISTEN%)
  --dial-out URL       instead of serving, connect to the gateway at URL (e.g.
                       http://127.0.0.1:8080) and play over its BotLinkService [$PARLEY_DIAL_OUT]
  --token TOKEN        team token, for --dial-out; better in the variable [$PARLEY_TOKEN]
  --bot NAME           registered bot name, for --dial-out [$PARLEY_BOT] (default: the agent's name)
  --version V          registered version the bot runs, for --dial-out (empty: not checked)
  --grace SECONDS      time calls in flight get on SIGINT/SIGTERM [$PARLEY_GRACE] (default 5)
  -h, --help           show this help
`;

/** Reads the mode and its settings from argv and env. Throws on a usage error; null for --help. */
export function runConfig(argv: string[], env: Record<string, string | undefined>, defaultListen = "127.0.0.1:50051"): RunConfig | null {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      listen: { type: "string" },
      "dial-out": { type: "string" },
      token: { type: "string" },
      bot: { type: "string" },
      version: { type: "string" },
      grace: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) return null;
  if (positionals.length > 0) throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const grace = Number(values.grace ?? env.PARLEY_GRACE ?? "5");
  if (!Number.isFinite(grace) || grace < 0) throw new Error(`--grace must be a number of seconds, got ${JSON.stringify(values.grace ?? env.PARLEY_GRACE)}`);
  const graceMs = Math.round(grace * 1000);
  if (values.listen !== undefined && values["dial-out"] !== undefined) throw new Error("--listen and --dial-out exclude each other: serve, or dial out");
  const gateway = values.listen !== undefined ? undefined : values["dial-out"] ?? env.PARLEY_DIAL_OUT;
  if (gateway) {
    const token = values.token ?? env.PARLEY_TOKEN ?? "";
    if (!token) throw new Error("--dial-out needs the team token in PARLEY_TOKEN (`parley admin team add NAME` prints it)");
    return { mode: "dial", gateway, token, bot: values.bot ?? env.PARLEY_BOT, version: values.version ?? "", graceMs };
  }
  for (const only of ["token", "bot", "version"] as const) {
    if (values[only] !== undefined) throw new Error(`--${only} is for --dial-out`);
  }
  return { mode: "serve", listen: values.listen ?? env.PARLEY_LISTEN ?? defaultListen, graceMs };
}

/**
 * Runs agent in the mode argv and env choose (see runConfig) until SIGINT or SIGTERM (a second
 * one stops at once). Resolves with the exit status (also set as process.exitCode): 0 after a
 * clean stop, 1 on a failure (port taken, token refused), 2 on a usage error.
 */
export async function run(agent: Agent, options: RunOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => void process.stdout.write(line + "\n"));
  const log = options.log ?? stderrLogger;
  const program = options.program ?? "bot";
  const code = await runInner(agent, options, out, log, program);
  process.exitCode = code;
  return code;
}

async function runInner(agent: Agent, options: RunOptions, out: (line: string) => void, log: Logger, program: string): Promise<number> {
  let cfg: RunConfig | null;
  try {
    cfg = runConfig(options.argv ?? process.argv.slice(2), options.env ?? process.env, options.defaultListen);
  } catch (err) {
    process.stderr.write(`${program}: ${err instanceof Error ? err.message : err}\n(--help lists the options)\n`);
    return 2;
  }
  if (cfg === null) {
    out(`Usage: ${program} [--listen HOST:PORT | --dial-out URL] [options]\n\n` + USAGE.replace("%LISTEN%", options.defaultListen ?? "127.0.0.1:50051"));
    return 0;
  }

  const stop = new AbortController();
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    if (++signals > 1) {
      process.stderr.write(`${program}: second ${sig}, stopping now\n`);
      process.exit(130);
    }
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    if (cfg.mode === "serve") {
      const server = await serve(agent, { address: cfg.listen, log });
      out(`listening on ${server.address}`);
      await new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener("abort", () => resolve(), { once: true })));
      await server.close(cfg.graceMs);
      return 0;
    }
    const { gateway } = cfg;
    const info = await describeAgent(agent);
    const bot = cfg.bot || info.name;
    const version = cfg.version;
    out(`dialling ${gateway} as bot ${bot}${version ? ` version ${version}` : ""}`);
    await dialOut(agent, {
      gateway,
      token: cfg.token,
      bot,
      version,
      graceMs: cfg.graceMs,
      signal: stop.signal,
      log,
      onWelcome: (w) => out(`connected as ${w.address} (team ${w.team})`),
      onRetry: (err, ms) => process.stderr.write(`${program}: link to ${gateway} lost (${err.message}); retrying in ${ms} ms\n`),
    });
    return 0;
  } catch (err) {
    process.stderr.write(`${program}: ${err instanceof Error ? err.message : err}\n`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
