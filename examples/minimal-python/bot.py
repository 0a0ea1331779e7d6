"""A complete Parley agent in plain Python gRPC, written from proto/ alone (no Parley SDK).

It plays every game legally from the observation's generic fields (legal_moves,
required_messages, choices, proposal_forms, proposal_bounds), and reads one game's own view
(buysell) to show how presence of an optional field is tested. It serves
parley.agent.v1.AgentService and grpc.health.v1.Health on --listen, or dials out to a gateway
(--dial-out URL --token T --bot NAME) and answers the same calls over
parley.botlink.v1.BotLinkService/Connect. Act gets whole observations; Play (one stream per
seat, kept from match to match) gets each call less what the call before carried, which
restore() puts back. It reads no briefing, and says so, so the referee writes none for it.

Generate the stubs first (Debian: protobuf-compiler, protobuf-compiler-grpc), from the
repository's root, then run with /usr/bin/python3 (python3-grpcio, python3-protobuf):

    mkdir -p examples/minimal-python/gen
    protoc -I proto --python_out=examples/minimal-python/gen --grpc_python_out=examples/minimal-python/gen \\
        --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin $(find proto/parley -name '*.proto')
    protoc -I proto/grpc/health/v1 --python_out=examples/minimal-python/gen \\
        --grpc_python_out=examples/minimal-python/gen \\
        --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin proto/grpc/health/v1/health.proto
    /usr/bin/python3 examples/minimal-python/bot.py --listen 127.0.0.1:50091

The health stubs are generated with proto/grpc/health/v1 as their root, so they are the
top-level modules health_pb2 and health_pb2_grpc: generated as grpc/health/v1/..., they would
make a package named grpc that hides grpcio's own.
"""

import argparse
import os
import queue
import sys
import threading
from concurrent import futures

sys.path.insert(0, os.environ.get("PARLEY_STUBS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402  (grpcio, after the stubs' folder is on the path)
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402
from parley.agent.v1 import agent_pb2, agent_pb2_grpc  # noqa: E402
from parley.botlink.v1 import botlink_pb2, botlink_pb2_grpc  # noqa: E402
from parley.game.v1 import game_pb2  # noqa: E402

NAME, VERSION = "minimal-python", "1"
AGENT_SERVICE = "parley.agent.v1.AgentService"


def describe():
    # No games listed: this bot says it plays any game. Its Play side takes match after match
    # on a stream, and it never reads the briefing.
    return agent_pb2.DescribeResponse(
        agent=game_pb2.AgentInfo(
            name=NAME, version=VERSION, author="examples",
            description="Plays a legal move in every game from the observation's generic fields."),
        observing=agent_pb2.Observing(streams_span_matches=True, skips_briefing=True))


def act(obs):
    """One legal action for the observation."""
    legal = set(obs.legal_moves)
    move = game_pb2.Move()
    if game_pb2.MOVE_KIND_SAY in legal:
        move.say.SetInParent()
    elif game_pb2.MOVE_KIND_CHOOSE in legal and obs.choices:
        move.choose.option = obs.choices[0].id
    elif game_pb2.MOVE_KIND_ACCEPT in legal and worth_accepting(obs):
        move.accept.SetInParent()
    elif game_pb2.MOVE_KIND_PROPOSE in legal and (obs.proposal_forms or obs.proposal_bounds):
        move.propose.proposal.CopyFrom(proposal(obs))
    elif game_pb2.MOVE_KIND_PASS in legal:
        # `pass` is a Python keyword: move.pass does not parse. getattr/setattr, or
        # game_pb2.Move(**{"pass": game_pb2.Pass()}), reach the field.
        getattr(move, "pass").SetInParent()
    elif game_pb2.MOVE_KIND_ACCEPT in legal:
        move.accept.SetInParent()
    else:
        move.reject.SetInParent()
    # Exactly one message per required slot, addressed exactly as the slot says.
    messages = [game_pb2.Message(to=list(slot.to), text="Hello from a minimal bot.") for slot in obs.required_messages]
    return agent_pb2.Action(move=move, messages=messages, private_reasoning="the first legal move on my list")


def worth_accepting(obs):
    """In buysell, accept only a price that does not lose money; anything elsewhere."""
    if obs.WhichOneof("view") != "buysell":
        return True
    view = obs.buysell
    # standing_price is optional: a standing offer of 0 and no offer at all differ only by
    # presence, never by value.
    if not view.HasField("standing_price"):
        return False
    if view.role == "seller":
        return view.standing_price >= view.private_value
    return view.standing_price <= view.private_value


def proposal(obs):
    """Terms from the first proposal form (or the bounds): a deal choosing the first option of
    every issue, or an allocation with every amount in its range and every total met. Every
    amount a bound lists is sent, the amounts the rules fix (min = max) too."""
    form = obs.proposal_forms[0] if obs.proposal_forms else None
    if form is not None and form.issues:
        return game_pb2.Proposal(deal=game_pb2.Deal(
            choices=[game_pb2.IssueChoice(issue=i.id, option=i.options[0].id) for i in form.issues]))
    bounds = list(form.bounds) if form is not None else list(obs.proposal_bounds)
    # The middle of each range; the minimum where no upper limit is known (max_unknown: the
    # other seat's holdings are hidden, and asking for too much is refused).
    amounts = [b.min if b.max_unknown else (b.min + b.max) // 2 for b in bounds]
    for total in (form.totals if form is not None else []):
        idx = [i for i, b in enumerate(bounds) if b.side == total.side and b.resource == total.resource]
        missing = total.total - sum(amounts[i] for i in idx)
        for i in idx:  # add what is missing (or take away the excess) bound by bound
            step = min(missing, bounds[i].max - amounts[i]) if missing > 0 else max(missing, bounds[i].min - amounts[i])
            amounts[i] += step
            missing -= step
    alloc = game_pb2.Allocation()
    shares = {}
    for b, amount in zip(bounds, amounts):
        if b.seat not in shares:
            shares[b.seat] = alloc.shares.add(seat=b.seat)
        side = shares[b.seat].gives if b.side == game_pb2.SHARE_SIDE_GIVES else shares[b.seat].receives
        side[b.resource] = amount
    return game_pb2.Proposal(allocation=alloc)


def restore(req, prev):
    """Put back into req's observation what it left out as the stream's previous call's
    (PlayRequest.same_as_before); prev is that call's whole observation, or None. A call with
    no same_as_before is whole (every match's first call is). Returns the whole observation."""
    obs = req.act.observation
    if not req.HasField("same_as_before"):
        return obs
    same = req.same_as_before
    if prev is None:
        raise ValueError("the call leaves out what no earlier call carried")
    if same.seats:
        obs.seats.extend(prev.seats)
    if same.briefing_bytes:  # a count of bytes of the UTF-8 text
        obs.briefing = (prev.briefing.encode()[: same.briefing_bytes] + obs.briefing.encode()).decode()
    if same.history:
        new = list(obs.history)
        del obs.history[:]
        obs.history.extend(prev.history[same.history_from:])
        obs.history.extend(new)
    return obs


# Each open Play stream holds one of the server's threads: past MAX_STREAMS the bot refuses a
# stream (UNIMPLEMENTED), and the referee asks that connection through Act instead.
MAX_WORKERS, MAX_STREAMS = 32, 28


class Agent(agent_pb2_grpc.AgentServiceServicer):
    def __init__(self):
        self.lock, self.streams = threading.Lock(), 0

    def Act(self, request, context):
        return agent_pb2.ActResponse(action=act(request.observation), turn=request.observation.turn)

    def Describe(self, request, context):
        return describe()

    def Play(self, requests, context):
        with self.lock:
            full = self.streams >= MAX_STREAMS
            self.streams += 0 if full else 1
        if full:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "every stream this bot can hold is open")
        try:
            prev = None
            for req in requests:
                out = agent_pb2.PlayResponse(call=req.call)
                try:
                    prev = restore(req, prev)
                except ValueError as err:  # the referee sends the call again, whole
                    prev, out.error_code, out.error_message = None, grpc.StatusCode.INVALID_ARGUMENT.value[0], str(err)
                    yield out
                    continue
                out.act.CopyFrom(agent_pb2.ActResponse(action=act(prev), turn=prev.turn))
                yield out
        finally:
            with self.lock:
                self.streams -= 1


class Health(health_pb2_grpc.HealthServicer):
    """SERVING for the whole server ("") and for the agent service; Parley asks both."""

    def Check(self, request, context):
        if request.service not in ("", AGENT_SERVICE):
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service " + request.service)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


def serve(listen):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=MAX_WORKERS))
    agent_pb2_grpc.add_AgentServiceServicer_to_server(Agent(), server)
    health_pb2_grpc.add_HealthServicer_to_server(Health(), server)
    port = server.add_insecure_port(listen)
    server.start()
    host = listen.rsplit(":", 1)[0]
    print("listening on %s:%d" % (host, port), flush=True)
    server.wait_for_termination()


def answer(call):
    """The CallResult for one Call from the gateway."""
    res = botlink_pb2.CallResult(call_id=call.call_id)
    kind = call.WhichOneof("kind")
    if kind == "act":
        res.act.CopyFrom(agent_pb2.ActResponse(action=act(call.act.observation), turn=call.act.observation.turn))
    elif kind == "describe":
        res.describe.CopyFrom(describe())
    else:
        res.error = "this bot does not know the call " + str(kind)
    return res


def dial_out(gateway, token, bot):
    """Hold a link open to the gateway and answer its calls until it closes. The gateway
    speaks gRPC over HTTP/2 without TLS on its HTTP port (http://host:port), so the channel is
    an insecure one to host:port; the team token goes in the metadata."""
    target = gateway.split("://", 1)[-1].rstrip("/")
    channel = grpc.insecure_channel(target)
    outbox = queue.Queue()
    outbox.put(botlink_pb2.ConnectRequest(hello=botlink_pb2.Hello(bot=bot, version=VERSION)))

    def requests():
        while True:
            msg = outbox.get()
            if msg is None:
                return
            yield msg

    stream = botlink_pb2_grpc.BotLinkServiceStub(channel).Connect(
        requests(), metadata=[("authorization", "Bearer " + token)])
    pool = futures.ThreadPoolExecutor(max_workers=8)
    try:
        for msg in stream:
            if msg.HasField("welcome"):
                print("connected as %s" % msg.welcome.address, flush=True)
            elif msg.HasField("call"):
                pool.submit(lambda c: outbox.put(botlink_pb2.ConnectRequest(result=answer(c))), msg.call)
    except grpc.RpcError as err:
        print("link closed: %s: %s" % (err.code().name, err.details()), file=sys.stderr, flush=True)
        return 1
    finally:
        outbox.put(None)
        pool.shutdown(wait=False)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--listen", default="127.0.0.1:50091", help="serve on this address (host:port; port 0 picks one)")
    p.add_argument("--dial-out", default=os.environ.get("PARLEY_DIAL_OUT", ""), help="gateway URL to dial instead, e.g. http://127.0.0.1:8080")
    p.add_argument("--token", default=os.environ.get("PARLEY_TOKEN", ""), help="team token, for --dial-out")
    p.add_argument("--bot", default=os.environ.get("PARLEY_BOT", ""), help="registered bot name, for --dial-out")
    args = p.parse_args()
    if args.dial_out:
        if not args.token or not args.bot:
            p.error("--dial-out needs --token (or $PARLEY_TOKEN) and --bot")
        return dial_out(args.dial_out, args.token, args.bot)
    serve(args.listen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
