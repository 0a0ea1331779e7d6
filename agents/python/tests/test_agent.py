"""Tests of the Python agent SDK and the example ultimatum bot, over a real gRPC channel.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s agents/python/tests -v
"""

import os
import select
import signal
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PY_DIR = os.path.dirname(HERE)  # agents/python
if PY_DIR not in sys.path:
    sys.path.insert(0, PY_DIR)

import grpc  # noqa: E402

import example_bot  # noqa: E402
import parley_agent  # noqa: E402
from parley_agent import agent_pb2, agent_pb2_grpc, game_pb2, ultimatum_pb2  # noqa: E402

PROPOSE = game_pb2.MOVE_KIND_PROPOSE
ACCEPT = game_pb2.MOVE_KIND_ACCEPT
REJECT = game_pb2.MOVE_KIND_REJECT
KIND = {
    "propose": game_pb2.MOVE_KIND_PROPOSE,
    "accept": game_pb2.MOVE_KIND_ACCEPT,
    "reject": game_pb2.MOVE_KIND_REJECT,
    "pass": game_pb2.MOVE_KIND_PASS,
    "choose": game_pb2.MOVE_KIND_CHOOSE,
}
TIMEOUT = 10  # seconds, for every RPC


def observation(seat, turn, legal, total=100, max_turns=8, offer=None, proposer=None, resolved=True,
                bounds=None, notes=(), rejection=None, history=()):
    """A hand-built ultimatum observation, shaped like the referee's."""
    params = ultimatum_pb2.Params()
    if resolved:
        params = ultimatum_pb2.Params(total=total, max_turns=max_turns, currency="Dollars")
    view = ultimatum_pb2.View(params=params, held=total if seat == 0 else 0,
                              opponent_held=0 if seat == 0 else total, turns_left=max_turns - turn)
    if offer is not None:
        view.standing_offer = offer
        view.standing_proposer = 1 - seat if proposer is None else proposer
    if bounds is None and PROPOSE in legal:
        bounds = [game_pb2.Bound(seat=0, side=game_pb2.SHARE_SIDE_GIVES, resource="Dollars", min=0, max=total)]
    obs = agent_pb2.Observation(
        match_id="m-test", game="ultimatum", seat=seat, turn=turn, max_turns=max_turns, attempt=1,
        seats=[game_pb2.SeatInfo(seat=0, name="P1"), game_pb2.SeatInfo(seat=1, name="P2")],
        legal_moves=list(legal), proposal_bounds=bounds or [], notes=list(notes),
        history=list(history), ultimatum=view, briefing="You play the multi-turn ultimatum game.",
    )
    if rejection is not None:
        obs.last_rejection.CopyFrom(rejection)
    return obs


class LegalityMixin:
    def assertLegal(self, obs, act):
        """The action's move is of a legal kind, its proposal fills only bounded amounts, each
        within its bound; and it carries a public message and some private reasoning."""
        kind = act.move.WhichOneof("kind")
        self.assertIsNotNone(kind, "action has no move")
        self.assertIn(KIND[kind], obs.legal_moves, "move %s not legal in %s" % (kind, list(obs.legal_moves)))
        if kind == "propose":
            self.assertEqual(act.move.propose.proposal.WhichOneof("terms"), "allocation")
            bounds = {(b.seat, b.side, b.resource): b for b in obs.proposal_bounds}
            for sh in act.move.propose.proposal.allocation.shares:
                for side, amounts in ((game_pb2.SHARE_SIDE_GIVES, sh.gives), (game_pb2.SHARE_SIDE_RECEIVES, sh.receives)):
                    for resource, amount in amounts.items():
                        b = bounds.get((sh.seat, side, resource))
                        if b is None:
                            self.assertEqual(amount, 0, "unbounded amount %s" % resource)
                        else:
                            self.assertGreaterEqual(amount, b.min)
                            self.assertLessEqual(amount, b.max)
        self.assertTrue(any(len(m.to) == 0 and m.text for m in act.messages), "no public message")
        self.assertTrue(act.private_reasoning)


def offered_to_p2(act):
    """x of an ultimatum proposal: what seat 0 gives."""
    shares = act.move.propose.proposal.allocation.shares
    return sum(sh.gives.get("Dollars", 0) for sh in shares if sh.seat == 0)


class ExampleBotOverGrpc(LegalityMixin, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server, cls.port = parley_agent.start(example_bot.SteadyConceder(), "127.0.0.1:0")
        cls.channel = grpc.insecure_channel("127.0.0.1:%d" % cls.port)
        grpc.channel_ready_future(cls.channel).result(timeout=TIMEOUT)
        cls.stub = agent_pb2_grpc.AgentServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.stop(None).wait()

    def act(self, obs):
        resp = self.stub.Act(agent_pb2.ActRequest(observation=obs), timeout=TIMEOUT)
        self.assertEqual(resp.turn, obs.turn, "the SDK echoes the turn")
        self.assertLegal(obs, resp.action)
        return resp.action

    def test_port_zero_binds_a_real_port(self):
        self.assertGreater(self.port, 0)

    def test_describe(self):
        info = self.stub.Describe(agent_pb2.DescribeRequest(), timeout=TIMEOUT).agent
        self.assertEqual(info.name, "steady-conceder")
        self.assertIn("ultimatum", info.games)
        self.assertTrue(info.version)
        self.assertTrue(info.description)

    def test_p1_first_turn_with_default_params(self):
        obs = observation(seat=0, turn=1, legal=[PROPOSE, REJECT], resolved=False)
        act = self.act(obs)
        self.assertEqual(act.move.WhichOneof("kind"), "propose")
        self.assertEqual(offered_to_p2(act), 40)  # asks 60 of 100 for itself
        self.assertEqual(act.private_notes, "turn 1: asked for 60")

    def test_p1_proposal_respects_narrow_bounds(self):
        bounds = [game_pb2.Bound(seat=0, side=game_pb2.SHARE_SIDE_GIVES, resource="Dollars", min=45, max=55)]
        act = self.act(observation(seat=0, turn=1, legal=[PROPOSE, REJECT], bounds=bounds))
        self.assertEqual(offered_to_p2(act), 45)

    def test_p2_accepts_generous_offer(self):
        history = [agent_pb2.HistoryEntry(turn=1, seat=0, move=parley_agent.propose_ultimatum(50),
                                          summary="P1 proposes: P1 gives 50 Dollars")]
        obs = observation(seat=1, turn=2, legal=[PROPOSE, ACCEPT, REJECT], offer=50, history=history)
        act = self.act(obs)
        self.assertEqual(act.move.WhichOneof("kind"), "accept")
        self.assertEqual(act.move.accept.proposal_turn, 1)

    def test_p2_counters_insulting_offer_mid_game(self):
        obs = observation(seat=1, turn=4, legal=[PROPOSE, ACCEPT, REJECT], offer=5)
        act = self.act(obs)
        self.assertEqual(act.move.WhichOneof("kind"), "propose")
        x = offered_to_p2(act)  # P2 asks for x for itself
        self.assertGreaterEqual(x, 50)
        self.assertLessEqual(x, 60)

    def test_p2_last_turn_accepts_positive_offer(self):
        act = self.act(observation(seat=1, turn=8, legal=[ACCEPT, REJECT], offer=1))
        self.assertEqual(act.move.WhichOneof("kind"), "accept")

    def test_p2_last_turn_rejects_zero_offer(self):
        act = self.act(observation(seat=1, turn=8, legal=[ACCEPT, REJECT], offer=0))
        self.assertEqual(act.move.WhichOneof("kind"), "reject")

    def test_last_rejection_falls_back_to_simple_legal_move(self):
        rej = game_pb2.Rejection(code=game_pb2.REJECTION_CODE_OUT_OF_TURN, message="stale proposal_turn")
        act = self.act(observation(seat=1, turn=2, legal=[PROPOSE, ACCEPT, REJECT], offer=5, rejection=rej))
        self.assertEqual(act.move.WhichOneof("kind"), "accept")
        self.assertEqual(act.move.accept.proposal_turn, 0)
        self.assertIn("REJECTION_CODE_OUT_OF_TURN", act.private_reasoning)

    def test_last_rejection_with_only_propose_legal(self):
        rej = game_pb2.Rejection(code=game_pb2.REJECTION_CODE_INVALID_TERMS, message="x over 100")
        bounds = [game_pb2.Bound(seat=0, side=game_pb2.SHARE_SIDE_GIVES, resource="Dollars", min=0, max=30)]
        act = self.act(observation(seat=0, turn=1, legal=[PROPOSE, REJECT], bounds=bounds, rejection=rej))
        self.assertEqual(act.move.WhichOneof("kind"), "propose")
        self.assertEqual(offered_to_p2(act), 30)

    def test_notes_carry_the_plan_between_turns(self):
        # P2 offers P1 only 10. Turn 3 would ask ceil(100*(150+20)/300) = 57 for itself, but the
        # note says it already asked for 52, and the bot never asks for more than before.
        act = self.act(observation(seat=0, turn=3, legal=[PROPOSE, ACCEPT, REJECT], offer=90,
                                   notes=["turn 1: asked for 52"]))
        self.assertEqual(offered_to_p2(act), 48)
        self.assertEqual(act.private_notes, "turn 3: asked for 52")
        self.assertIn("last ask 52", act.private_reasoning)

    def test_health_check_is_serving(self):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check",
                                         request_serializer=lambda b: b, response_deserializer=lambda b: b)
        self.assertEqual(check(b"", timeout=TIMEOUT), b"\x08\x01")
        name = b"parley.agent.v1.AgentService"
        self.assertEqual(check(b"\x0a" + bytes([len(name)]) + name, timeout=TIMEOUT), b"\x08\x01")
        with self.assertRaises(grpc.RpcError) as cm:
            check(b"\x0a\x03foo", timeout=TIMEOUT)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)


class EveryObservationGetsALegalMove(LegalityMixin, unittest.TestCase):
    """A sweep over games, seats, turns and offers, calling the bot directly (no network)."""

    def test_sweep(self):
        bot = example_bot.SteadyConceder()
        for total in (1, 10, 100, 10**10, 2**53):
            for max_turns in (1, 2, 3, 8, 9):
                for turn in range(1, max_turns + 1):
                    seat = (turn - 1) % 2
                    last = turn == max_turns
                    for offer in (None, 0, 1, total // 3, total // 2, total):
                        # As the referee lists them: propose but on the last turn, accept when
                        # there is an offer, reject always.
                        legal = ([] if last else [PROPOSE]) + ([] if offer is None else [ACCEPT]) + [REJECT]
                        obs = observation(seat, turn, legal, total=total, max_turns=max_turns, offer=offer)
                        with self.subTest(total=total, max_turns=max_turns, turn=turn, offer=offer):
                            act = bot.act(obs)
                            self.assertLegal(obs, act)
                            if offer is not None and last:
                                mine = offer if seat == 1 else total - offer
                                self.assertEqual(act.move.WhichOneof("kind"), "accept" if mine > 0 else "reject")


class ProposeAmount(unittest.TestCase):
    """propose_amount sends the amounts the rules fix too, since the referee fills none in."""

    def bounds(self):
        item = game_pb2.Bound(seat=0, side=game_pb2.SHARE_SIDE_GIVES, resource="X", min=1, max=1)
        price = game_pb2.Bound(seat=1, side=game_pb2.SHARE_SIDE_GIVES, resource="ZUP", min=0, max=100)
        pool = game_pb2.Bound(seat=2, side=game_pb2.SHARE_SIDE_RECEIVES, resource="g", min=5, max=5)
        return item, price, pool

    def terms(self, move):
        return {(s.seat, side, k): v for s in move.propose.proposal.allocation.shares
                for side, m in (("gives", s.gives), ("receives", s.receives)) for k, v in m.items()}

    def test_fixed_amounts_come_from_the_observation(self):
        item, price, pool = self.bounds()
        obs = agent_pb2.Observation(legal_moves=[PROPOSE], proposal_bounds=[item, price, pool])
        move = parley_agent.propose_amount(price, 40, obs)
        self.assertEqual(self.terms(move), {(0, "gives", "X"): 1, (1, "gives", "ZUP"): 40, (2, "receives", "g"): 5})
        self.assertEqual([s.seat for s in move.propose.proposal.allocation.shares], [0, 1, 2], "one share per seat, in order")

    def test_without_the_observation_only_the_one_amount(self):
        _, price, _ = self.bounds()
        self.assertEqual(self.terms(parley_agent.propose_amount(price, 40)), {(1, "gives", "ZUP"): 40})

    def test_clamp_keeps_a_known_limit_and_only_the_minimum_of_an_unknown_one(self):
        _, price, _ = self.bounds()
        self.assertEqual([parley_agent.clamp(price, v) for v in (-3, 40, 500)], [0, 40, 100])
        hidden = game_pb2.Bound(seat=1, side=game_pb2.SHARE_SIDE_GIVES, resource="Y", min=0,
                                max=2**63 - 1, max_unknown=True)
        self.assertEqual([parley_agent.clamp(hidden, v) for v in (-3, 40, 500)], [0, 40, 500])

    def test_the_amount_given_wins_over_a_fixed_one(self):
        item, price, _ = self.bounds()
        obs = agent_pb2.Observation(legal_moves=[PROPOSE], proposal_bounds=[item, price])
        self.assertEqual(self.terms(parley_agent.propose_amount(item, 1, obs)), {(0, "gives", "X"): 1})


class Boom(parley_agent.Agent):
    name = "boom"

    def act(self, observation):
        raise ValueError("boom at turn %d" % observation.turn)


class FailingAgent(unittest.TestCase):
    def test_exception_in_act_is_internal_and_server_keeps_serving(self):
        server, port = parley_agent.start(Boom(), "127.0.0.1:0")
        self.addCleanup(lambda: server.stop(None).wait())
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            req = agent_pb2.ActRequest(observation=observation(seat=0, turn=3, legal=[PROPOSE, REJECT]))
            for _ in range(2):  # the second call proves the server survived the first
                with self.assertLogs("parley_agent", level="ERROR"):
                    with self.assertRaises(grpc.RpcError) as cm:
                        stub.Act(req, timeout=TIMEOUT)
                self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL)
                self.assertIn("ValueError: boom at turn 3", cm.exception.details())
            info = stub.Describe(agent_pb2.DescribeRequest(), timeout=TIMEOUT).agent
            self.assertEqual(info.name, "boom")

    def test_act_returning_wrong_type_is_internal(self):
        class Wrong:
            def act(self, observation):
                return "accept"

        server, port = parley_agent.start(Wrong(), "127.0.0.1:0")
        self.addCleanup(lambda: server.stop(None).wait())
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            with self.assertLogs("parley_agent", level="ERROR"):
                with self.assertRaises(grpc.RpcError) as cm:
                    stub.Act(agent_pb2.ActRequest(observation=agent_pb2.Observation(turn=1)), timeout=TIMEOUT)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL)
            self.assertIn("must return an agent_pb2.Action", cm.exception.details())
            # Without describe() or attributes, the class name is the agent's name.
            self.assertEqual(stub.Describe(agent_pb2.DescribeRequest(), timeout=TIMEOUT).agent.name, "Wrong")


class Recorder(parley_agent.Agent):
    """Passes, keeping a copy of every observation it is given."""

    name = "recorder"
    skips_briefing = True

    def __init__(self):
        self.seen = []

    def act(self, observation):
        copy = agent_pb2.Observation()
        copy.CopyFrom(observation)
        self.seen.append(copy)
        return parley_agent.pass_turn()


def entry(turn, summary):
    return agent_pb2.HistoryEntry(turn=turn, seat=turn % 2, summary=summary)


class PlayStreams(unittest.TestCase):
    """Play over a real stream: each call's observation is put back together from what it
    leaves out as the previous call's, so act() is given what Act would give it."""

    def setUp(self):
        self.agent = Recorder()
        self.server, port = parley_agent.start(self.agent, "127.0.0.1:0", max_workers=6)
        self.addCleanup(lambda: self.server.stop(None).wait())
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % port)
        self.addCleanup(self.channel.close)
        self.stub = agent_pb2_grpc.AgentServiceStub(self.channel)

    def test_describe_says_how_it_observes(self):
        got = self.stub.Describe(agent_pb2.DescribeRequest(), timeout=TIMEOUT).observing
        self.assertTrue(got.streams_span_matches)
        self.assertTrue(got.skips_briefing)

    def test_calls_put_back_together(self):
        rules = "Rules: é and ü, line after line.\n" * 12
        whole = [
            observation(seat=0, turn=1, legal=[PROPOSE, REJECT]),
            observation(seat=0, turn=3, legal=[PROPOSE, ACCEPT, REJECT], offer=40, history=[entry(1, "P1 proposes"), entry(2, "P2 proposes")]),
            observation(seat=0, turn=5, legal=[PROPOSE, ACCEPT, REJECT], offer=45,
                        history=[entry(1, "P1 proposes"), entry(2, "P2 proposes"), entry(3, "P1 again"), entry(4, "P2 again")]),
        ]
        for i, obs in enumerate(whole):
            obs.briefing = rules + "Your situation on turn %d: ü\n" % obs.turn
        # What the referee sends: the first whole, then each leaving out what the one before carried.
        sent = [agent_pb2.PlayRequest(call=1, act=agent_pb2.ActRequest(observation=whole[0]))]
        for i in (1, 2):
            obs = agent_pb2.Observation()
            obs.CopyFrom(whole[i])
            del obs.seats[:]
            obs.briefing = whole[i].briefing[len(rules):]
            kept = len(whole[i - 1].history)
            new = list(obs.history)[kept:]
            del obs.history[:]
            obs.history.extend(new)
            same = agent_pb2.SameAsBefore(seats=True, briefing_bytes=len(rules.encode("utf-8")), history=True, history_from=0)
            sent.append(agent_pb2.PlayRequest(call=i + 1, act=agent_pb2.ActRequest(observation=obs), same_as_before=same))
        answers = list(self.stub.Play(iter(sent), timeout=TIMEOUT))
        self.assertEqual([a.call for a in answers], [1, 2, 3])
        for a in answers:
            self.assertEqual(a.error_code, 0, a.error_message)
            self.assertTrue(a.act.action.move.HasField("pass"))
        self.assertEqual(len(self.agent.seen), 3)
        for got, want in zip(self.agent.seen, whole):
            self.assertEqual(got, want)

    def test_a_call_that_cannot_be_followed_is_refused(self):
        first = agent_pb2.PlayRequest(call=1, act=agent_pb2.ActRequest(observation=observation(seat=0, turn=1, legal=[PROPOSE])),
                                      same_as_before=agent_pb2.SameAsBefore(seats=True))
        second = agent_pb2.PlayRequest(call=2, act=agent_pb2.ActRequest(observation=observation(seat=0, turn=1, legal=[PROPOSE])))
        answers = list(self.stub.Play(iter([first, second]), timeout=TIMEOUT))
        self.assertEqual(answers[0].error_code, grpc.StatusCode.INVALID_ARGUMENT.value[0])
        self.assertIn("no earlier call", answers[0].error_message)
        self.assertEqual(answers[1].error_code, 0)  # a whole call afterwards is followed again
        self.assertEqual(len(self.agent.seen), 1)

    def test_streams_past_the_threads_are_refused(self):
        # 6 workers, 4 kept for Act: two streams may be open, a third is refused, and Act
        # still answers.
        import queue
        feeds = [queue.Queue() for _ in range(3)]

        def requests(q):
            while True:
                r = q.get()
                if r is None:
                    return
                yield r

        streams = [self.stub.Play(requests(q), timeout=TIMEOUT) for q in feeds]
        call = agent_pb2.PlayRequest(call=1, act=agent_pb2.ActRequest(observation=observation(seat=0, turn=1, legal=[PROPOSE])))
        for q in feeds[:2]:
            q.put(call)
        for st in streams[:2]:
            self.assertEqual(next(st).call, 1)
        with self.assertRaises(grpc.RpcError) as cm:
            next(streams[2])
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        act = self.stub.Act(agent_pb2.ActRequest(observation=observation(seat=0, turn=1, legal=[PROPOSE])), timeout=TIMEOUT)
        self.assertTrue(act.action.move.HasField("pass"))
        for q in feeds:
            q.put(None)


class OneCommand(unittest.TestCase):
    """The bot starts with one command, announces its address, and stops cleanly on a signal."""

    def test_start_announce_describe_sigterm(self):
        self.run_bot_until(signal.SIGTERM)

    def test_start_announce_describe_sigint(self):
        self.run_bot_until(signal.SIGINT)

    def run_bot_until(self, sig):
        script = os.path.join(PY_DIR, "example_bot.py")
        proc = subprocess.Popen(["/usr/bin/python3", script, "--listen", "127.0.0.1:0", "--grace", "1"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.addCleanup(proc.stdout.close)
        self.addCleanup(proc.stderr.close)
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        self.assertTrue(ready, "no 'listening on' line within %ds" % TIMEOUT)
        line = proc.stdout.readline().strip()
        self.assertRegex(line, r"^listening on 127\.0\.0\.1:\d+$")
        port = int(line.rsplit(":", 1)[1])
        self.assertGreater(port, 0)
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            info = stub.Describe(agent_pb2.DescribeRequest(), timeout=TIMEOUT).agent
            self.assertEqual(info.name, "steady-conceder")
            # The referee asks over Play first: the bot answers there.
            call = agent_pb2.PlayRequest(call=1, act=agent_pb2.ActRequest(observation=observation(seat=0, turn=1, legal=[PROPOSE, REJECT])))
            answers = list(stub.Play(iter([call]), timeout=TIMEOUT))
            self.assertEqual([a.call for a in answers], [1])
            self.assertEqual(answers[0].error_code, 0, answers[0].error_message)
        proc.send_signal(sig)
        code = proc.wait(timeout=TIMEOUT)
        log = proc.stderr.read()
        self.assertEqual(code, 0, log)
        # ... and says so without a traceback in its log.
        self.assertNotIn("Traceback", log)


if __name__ == "__main__":
    unittest.main()
