"""The gRPC side: AgentService on top of an author's object, a health service, start/serve."""

import inspect
import logging
import signal
import threading
from concurrent import futures

import grpc

from parley.agent.v1 import agent_pb2, agent_pb2_grpc
from parley.game.v1 import game_pb2

log = logging.getLogger("parley_agent")

AGENT_SERVICE = "parley.agent.v1.AgentService"
HEALTH_SERVICE = "grpc.health.v1.Health"

# Longest error text sent back to the referee; the full traceback goes to the agent's own log.
_MAX_DETAIL = 300


class Agent:
    """Optional base class. Subclassing is not required: serve() accepts any object with an
    act(observation) method. Set the attributes to describe the agent, or override describe().
    Set skips_briefing when act() never reads observation.briefing: the referee then writes
    none for it (bots that act on the typed fields; never a language model).
    """

    name = ""
    version = ""
    author = ""
    games = ()
    description = ""
    skips_briefing = False

    def describe(self):
        return info_from_attributes(self)

    def act(self, observation):
        raise NotImplementedError("act() must return an agent_pb2.Action")


def info_from_attributes(agent):
    """AgentInfo from the attributes name, version, author, games and description. The name
    defaults to the class name and the description to the first paragraph of its docstring."""
    cls = type(agent)
    games = getattr(agent, "games", ()) or ()
    if isinstance(games, str):
        games = [games]
    description = getattr(agent, "description", "") or ""
    if not description and cls.__doc__:
        description = " ".join(inspect.cleandoc(cls.__doc__).split("\n\n")[0].split())
    return game_pb2.AgentInfo(
        name=getattr(agent, "name", "") or cls.__name__,
        version=str(getattr(agent, "version", "") or ""),
        author=getattr(agent, "author", "") or "",
        games=list(games),
        description=description,
    )


def _describe(agent):
    fn = getattr(agent, "describe", None)
    if not callable(fn):
        return info_from_attributes(agent)
    info = fn()
    if isinstance(info, game_pb2.AgentInfo):
        return info
    if isinstance(info, agent_pb2.DescribeResponse):
        return info.agent
    raise TypeError("describe() must return a game_pb2.AgentInfo, not %s" % type(info).__name__)


def _as_action(result):
    if isinstance(result, agent_pb2.Action):
        return result
    if isinstance(result, game_pb2.Move):  # a bare move is accepted for convenience
        return agent_pb2.Action(move=result)
    raise TypeError("act() must return an agent_pb2.Action, not %s" % type(result).__name__)


def _short(what, err):
    text = "agent %s raised %s: %s" % (what, type(err).__name__, err)
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


class PlayBroken(ValueError):
    """A Play call leaves out what its stream's earlier calls did not carry."""


class Carried:
    """What a Play call's whole observation carried that the next call may leave out: all the
    stream keeps of it."""

    __slots__ = ("seats", "briefing", "history")

    def __init__(self, obs):
        self.seats = list(obs.seats)
        self.briefing = obs.briefing.encode("utf-8")  # same_as_before counts bytes
        self.history = list(obs.history)


def restore(request, prev):
    """Put back into request's observation what the call left out as the previous call's
    (PlayRequest.same_as_before), prev being what that call carried (a Carried, or None on a
    stream's first call). Returns what this call carries, for the next. Raises PlayBroken
    when the call cannot be followed; the referee then sends it again, whole."""
    obs = request.act.observation
    if request.HasField("same_as_before"):
        same = request.same_as_before
        if prev is None:
            raise PlayBroken("play: the call leaves out what no earlier call of the stream carried")
        if same.seats:
            obs.seats.extend(prev.seats)
        if same.briefing_bytes:
            if same.briefing_bytes > len(prev.briefing):
                raise PlayBroken("play: the call keeps %d bytes of a %d-byte briefing" % (same.briefing_bytes, len(prev.briefing)))
            obs.briefing = (prev.briefing[: same.briefing_bytes] + obs.briefing.encode("utf-8")).decode("utf-8")
        if same.history:
            if same.history_from > len(prev.history):
                raise PlayBroken("play: the call keeps history from entry %d of %d" % (same.history_from, len(prev.history)))
            new = list(obs.history)
            del obs.history[:]
            obs.history.extend(prev.history[same.history_from :])
            obs.history.extend(new)
    return Carried(obs)


class AgentServicer(agent_pb2_grpc.AgentServiceServicer):
    """parley.agent.v1.AgentService served by an author's object.

    An exception in the author's code becomes an INTERNAL status with a short message (which
    the referee records as the agent's fault); the server itself keeps serving. act() may be
    called from several threads at once (one per concurrent match): keep per-match state in
    Action.private_notes rather than on the object, or guard it with a lock.

    Play (Act over one stream per seat) puts each call's observation back together, so act()
    is always given the whole observation. A stream holds one of the server's worker threads
    while it is open; past max_streams open at once, a new one is refused (UNIMPLEMENTED) and
    the referee asks that connection through Act instead, so that Act and Describe always find
    a thread.
    """

    def __init__(self, agent, max_streams=None):
        if not callable(getattr(agent, "act", None)):
            raise TypeError("parley_agent: the agent needs an act(observation) method")
        self._agent = agent
        self._max_streams = max_streams
        self._streams = 0
        self._lock = threading.Lock()

    def _act(self, obs):
        """The agent's answer to obs, or raises the status to answer with."""
        try:
            act = _as_action(self._agent.act(obs))
        except Exception as err:  # the author's bug, not the server's: report and keep serving
            log.exception("act() failed: match %s seat %d turn %d", obs.match_id, obs.seat, obs.turn)
            raise _Status(grpc.StatusCode.INTERNAL, _short("act()", err)) from None
        # Echo the turn, so the referee refuses this answer if it arrives for a stale request.
        return agent_pb2.ActResponse(action=act, turn=obs.turn)

    def Act(self, request, context):
        try:
            return self._act(request.observation)
        except _Status as st:
            context.abort(st.code, st.message)

    def Play(self, request_iterator, context):
        with self._lock:
            full = self._max_streams is not None and self._streams >= self._max_streams
            if not full:
                self._streams += 1
        if full:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "parley_agent: every stream this server can hold is open; use Act")
        try:
            prev = None
            for req in request_iterator:
                out = agent_pb2.PlayResponse(call=req.call)
                try:
                    prev = restore(req, prev)
                    out.act.CopyFrom(self._act(req.act.observation))
                except PlayBroken as err:
                    prev = None
                    out.error_code, out.error_message = grpc.StatusCode.INVALID_ARGUMENT.value[0], str(err)
                except _Status as st:
                    out.error_code, out.error_message = st.code.value[0], st.message
                yield out
        finally:
            with self._lock:
                self._streams -= 1

    def Describe(self, request, context):
        try:
            info = _describe(self._agent)
        except Exception as err:
            log.exception("describe() failed")
            context.abort(grpc.StatusCode.INTERNAL, _short("describe()", err))
        return agent_pb2.DescribeResponse(agent=info, observing=observing(self._agent))


def observing(agent):
    """How agent, served by this SDK, takes its observations: whole, put back together from
    what each Play call leaves out, on streams that span matches; without a briefing when the
    agent's skips_briefing says so."""
    skips = getattr(agent, "skips_briefing", False)
    if callable(skips):
        skips = skips()
    return agent_pb2.Observing(streams_span_matches=True, skips_briefing=bool(skips))


class _Status(Exception):
    """A gRPC status to answer a call with."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


# --- Health -----------------------------------------------------------------------------------
# Debian ships no grpc_health package (grpcio-health-checking), so the standard
# grpc.health.v1.Health/Check method is served by hand: a generic handler with no
# (de)serializers, which hands us the request as raw bytes and sends raw bytes back. The
# messages are tiny: HealthCheckRequest{string service = 1} and
# HealthCheckResponse{ServingStatus status = 1}, where SERVING = 1 encodes as tag 0x08
# (field 1, varint) followed by 0x01. Watch is not implemented (UNIMPLEMENTED), which the
# health protocol allows clients to treat as "use Check".

_SERVING = b"\x08\x01"


def _varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _health_request_service(raw):
    """The `service` field of a serialized HealthCheckRequest ("" when absent)."""
    service, i = "", 0
    while i < len(raw):
        key, i = _varint(raw, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(raw, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(raw, i)
            if i + n > len(raw):
                raise ValueError("truncated field")
            if field == 1:
                service = raw[i : i + n].decode("utf-8")
            i += n
        else:
            raise ValueError("unsupported wire type %d" % wire)
    return service


def health_handler(services=("", AGENT_SERVICE)):
    """A generic handler answering grpc.health.v1.Health/Check: SERVING for the server as a
    whole ("") and for each listed service, NOT_FOUND for any other name."""
    known = frozenset(services)

    def check(request, context):
        try:
            service = _health_request_service(bytes(request))
        except ValueError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "malformed HealthCheckRequest: %s" % err)
        if service not in known:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % service)
        return _SERVING

    return grpc.method_handlers_generic_handler(
        HEALTH_SERVICE, {"Check": grpc.unary_unary_rpc_method_handler(check)}
    )


# --- Start and serve --------------------------------------------------------------------------


# Worker threads kept free of Play streams, for Act, Describe and health checks.
_SPARE_WORKERS = 4


def start(agent, address="127.0.0.1:0", max_workers=32):
    """Start serving agent on address without blocking. Returns (server, bound_port); port 0
    picks a free port. Stop it with server.stop(grace). Each open Play stream holds one of the
    max_workers threads; all but a few may."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="parley-agent"))
    servicer = AgentServicer(agent, max_streams=max(0, max_workers - _SPARE_WORKERS))
    agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, server)
    server.add_generic_rpc_handlers((health_handler(),))
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as err:  # newer grpcio raises; 1.51 returns 0
        raise RuntimeError("parley_agent: cannot listen on %s: %s" % (address, err)) from None
    if port == 0:
        raise RuntimeError("parley_agent: cannot listen on %s" % address)
    server.start()
    return server, port


def listen_address(address, port):
    """address with its port replaced by the bound port, for display ("127.0.0.1:0" ->
    "127.0.0.1:43121")."""
    if address.startswith("unix:"):
        return address
    host, sep, _ = address.rpartition(":")
    return "%s:%d" % (host if sep else address, port)


def serve(agent, address="127.0.0.1:50051", grace=5.0, max_workers=32, announce=True):
    """Serve agent on address until SIGINT or SIGTERM, then stop, giving calls in flight up to
    `grace` seconds to finish. With announce, prints "listening on HOST:PORT" (the bound port)
    to stdout once the server accepts calls, so a harness can wait for that line."""
    if threading.current_thread() is not threading.main_thread():
        # Signal handlers can only be set in the main thread; the caller stops the server.
        server, port = start(agent, address, max_workers=max_workers)
        _announce(address, port, announce)
        server.wait_for_termination()
        return

    stop = threading.Event()
    previous = {}

    def on_signal(signum, frame):
        stop.set()

    # Handlers go in before the server starts, so a harness that signals as soon as it reads
    # the "listening on" line always gets a clean stop.
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, on_signal)
    server = None
    try:
        server, port = start(agent, address, max_workers=max_workers)
        _announce(address, port, announce)
        # A timed wait keeps the main thread responsive to signals on every Python version.
        while not stop.wait(1.0):
            pass
    finally:
        # Put the old handlers back first, so a second Ctrl-C during the grace period stops
        # at once instead of waiting.
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server is not None:
            log.info("stopping (grace %.1fs)", grace)
            try:
                server.stop(grace).wait()
            except KeyboardInterrupt:
                server.stop(0).wait()


def _announce(address, port, announce):
    shown = listen_address(address, port)
    log.info("listening on %s", shown)
    if announce:
        print("listening on %s" % shown, flush=True)
