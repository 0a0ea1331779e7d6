"""Dial-out mode: the bot opens one stream to the gateway (BotLinkService.Connect) with its team
token and answers the referee's calls on it, so it needs no open port. The switch between the
two modes is one flag: ``--listen ADDR`` serves, ``--dial-out URL --token T --bot NAME`` dials.
"""

import argparse
import logging
import os
import queue
import signal
import threading
import time
from concurrent import futures

import grpc

from parley.agent.v1 import agent_pb2
from parley.botlink.v1 import botlink_pb2, botlink_pb2_grpc

from .server import _as_action, _describe, _short, observing, serve

log = logging.getLogger("parley_agent")

# Codes that mean the gateway refused this bot: retrying would not help.
_REFUSED = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
}


class DialRefused(RuntimeError):
    """The gateway refused the session (bad token, unknown or retired bot, wrong version)."""


def _answer(agent, call):
    """The CallResult for one Call, with the same handling as the gRPC server: an exception in
    the author's code becomes an error the referee records as the agent's fault."""
    res = botlink_pb2.CallResult(call_id=call.call_id)
    kind = call.WhichOneof("kind")
    try:
        if kind == "act":
            obs = call.act.observation
            act = _as_action(agent.act(obs))
            res.act.CopyFrom(agent_pb2.ActResponse(action=act, turn=obs.turn))
        elif kind == "describe":
            res.describe.CopyFrom(agent_pb2.DescribeResponse(agent=_describe(agent), observing=observing(agent)))
        else:
            res.error = "this bot does not know the call"
    except Exception as err:  # the author's bug: report it and keep the link
        log.exception("%s() failed", kind)
        res.error = _short("%s()" % kind, err)
    return res


def _channel(url):
    if url.startswith("http://"):
        return grpc.insecure_channel(url[len("http://") :].rstrip("/"))
    if url.startswith("https://"):
        return grpc.secure_channel(url[len("https://") :].rstrip("/"), grpc.ssl_channel_credentials())
    raise ValueError("gateway URL %r: want http://host:port or https://host" % url)


class Link:
    """One dial-out session. ``run()`` blocks until the stream ends; ``stop()`` ends it."""

    def __init__(self, agent, url, token, bot, version="", max_workers=8):
        if not (url and token and bot):
            raise ValueError("dial out needs the gateway's URL, the team token and the bot's name")
        self._agent, self._url, self._token, self._bot, self._version = agent, url, token, bot, version
        self._max_workers = max_workers
        self._lock = threading.Lock()
        self._call = None
        self._stopped = threading.Event()
        self.address = None  # set by Welcome

    def stop(self):
        self._stopped.set()
        with self._lock:
            if self._call is not None:
                self._call.cancel()

    def run(self, on_welcome=None):
        out = queue.Queue()
        out.put(botlink_pb2.ConnectRequest(hello=botlink_pb2.Hello(bot=self._bot, version=self._version)))

        def requests():
            while True:
                msg = out.get()
                if msg is None:
                    return
                yield msg

        channel = _channel(self._url)
        pool = futures.ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="parley-link")
        try:
            stub = botlink_pb2_grpc.BotLinkServiceStub(channel)
            call = stub.Connect(requests(), metadata=(("authorization", "Bearer " + self._token),))
            with self._lock:
                self._call = call
            if self._stopped.is_set():
                call.cancel()
            welcomed = False
            for msg in call:
                which = msg.WhichOneof("msg")
                if which == "welcome":
                    welcomed = True
                    self.address = msg.welcome.address
                    log.info("bot link open: %s", self.address)
                    if on_welcome is not None:
                        on_welcome(self.address)
                elif which == "call" and welcomed:
                    c = msg.call
                    pool.submit(lambda c=c: out.put(botlink_pb2.ConnectRequest(result=_answer(self._agent, c))))
        except grpc.RpcError as err:
            if self._stopped.is_set() and err.code() == grpc.StatusCode.CANCELLED:
                return
            if err.code() in _REFUSED:
                raise DialRefused("the gateway refused bot %s: %s" % (self._bot, err.details())) from None
            raise
        finally:
            out.put(None)
            pool.shutdown(wait=False)
            channel.close()


def dial_out(agent, url, token, bot, version="", reconnect=True, max_workers=8, on_welcome=None, announce=True):
    """Serve agent over a stream to the gateway at url until SIGINT/SIGTERM (or, without
    reconnect, until the stream ends). A broken link is reopened after a growing pause; a
    refusal raises DialRefused. With announce, prints "connected as bot:TEAM/NAME" once the
    gateway welcomes the bot."""

    def welcomed(address):
        if announce:
            print("connected as %s" % address, flush=True)
        if on_welcome is not None:
            on_welcome(address)

    link = Link(agent, url, token, bot, version, max_workers)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: link.stop())
    wait = 0.25
    try:
        while True:
            opened = time.monotonic()
            try:
                link.run(welcomed)
                err = None
            except grpc.RpcError as e:
                err = e
            if link._stopped.is_set() or not reconnect:
                if err is not None and not link._stopped.is_set():
                    raise err
                return
            if time.monotonic() - opened > 60:
                wait = 0.25
            log.warning("bot link closed (%s); reconnecting in %.2fs", err.details() if err else "stream ended", wait)
            if link._stopped.wait(wait):
                return
            wait = min(wait * 2, 30.0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def add_mode_arguments(parser, default_listen="127.0.0.1:50061"):
    """Add the serve-or-dial switch to an argparse parser: --listen, or --dial-out with --token,
    --bot and --version (each falling back to $PARLEY_DIAL_OUT, $PARLEY_TOKEN, $PARLEY_BOT)."""
    parser.add_argument("--listen", default=default_listen, help="serve the agent on host:port (default %(default)s)")
    parser.add_argument("--dial-out", default=os.environ.get("PARLEY_DIAL_OUT", ""), metavar="URL",
                        help="instead of serving, connect to the gateway at URL, e.g. http://127.0.0.1:8080 [$PARLEY_DIAL_OUT]")
    parser.add_argument("--token", default=os.environ.get("PARLEY_TOKEN", ""), help="team token, for --dial-out [$PARLEY_TOKEN]")
    parser.add_argument("--bot", default=os.environ.get("PARLEY_BOT", ""), help="registered bot name, for --dial-out [$PARLEY_BOT]")
    parser.add_argument("--version", default="", help="registered version, for --dial-out (empty: not checked)")


def run(agent, args, grace=5.0):
    """Serve or dial out, as parsed by add_mode_arguments."""
    if args.dial_out:
        if not args.token or not args.bot:
            raise argparse.ArgumentTypeError("--dial-out needs --token (or $PARLEY_TOKEN) and --bot")
        dial_out(agent, args.dial_out, args.token, args.bot, args.version)
    else:
        serve(agent, args.listen, grace=grace)
