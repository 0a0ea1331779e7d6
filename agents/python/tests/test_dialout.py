"""Tests of the dial-out side of the Python SDK that need no gateway. The full path (a Python
bot dialling a real gateway and playing a match) is gateway/botlink_test.go.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s agents/python/tests -v
"""

import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PY_DIR = os.path.dirname(HERE)
if PY_DIR not in sys.path:
    sys.path.insert(0, PY_DIR)

import grpc  # noqa: E402

import parley_agent  # noqa: E402
from parley_agent import agent_pb2, game_pb2  # noqa: E402
from parley_agent.dialout import _answer  # noqa: E402
from parley.botlink.v1 import botlink_pb2  # noqa: E402


class Accepter(parley_agent.Agent):
    name, version = "accepter", "3"

    def act(self, obs):
        if obs.turn == 99:
            raise ValueError("boom")
        return parley_agent.action(parley_agent.accept())


class AnswerTest(unittest.TestCase):
    def test_act_echoes_turn_and_call_id(self):
        call = botlink_pb2.Call(call_id="c1", act=agent_pb2.ActRequest(observation=agent_pb2.Observation(turn=4)))
        res = _answer(Accepter(), call)
        self.assertEqual(res.call_id, "c1")
        self.assertEqual(res.WhichOneof("kind"), "act")
        self.assertEqual(res.act.turn, 4)
        self.assertEqual(res.act.action.move.WhichOneof("kind"), "accept")

    def test_an_exception_is_an_error_result(self):
        call = botlink_pb2.Call(call_id="c2", act=agent_pb2.ActRequest(observation=agent_pb2.Observation(turn=99)))
        with self.assertLogs("parley_agent", level="ERROR"):
            res = _answer(Accepter(), call)
        self.assertEqual(res.WhichOneof("kind"), "error")
        self.assertIn("boom", res.error)

    def test_describe(self):
        res = _answer(Accepter(), botlink_pb2.Call(call_id="c3", describe=agent_pb2.DescribeRequest()))
        self.assertEqual(res.describe.agent.name, "accepter")
        self.assertEqual(res.describe.agent.version, "3")


class ModeTest(unittest.TestCase):
    def parse(self, *argv):
        p = argparse.ArgumentParser()
        parley_agent.add_mode_arguments(p)
        return p.parse_args(argv)

    def test_switch(self):
        args = self.parse("--dial-out", "http://127.0.0.1:1", "--token", "pt_x", "--bot", "b")
        self.assertEqual((args.dial_out, args.token, args.bot), ("http://127.0.0.1:1", "pt_x", "b"))
        with self.assertRaises(argparse.ArgumentTypeError):
            parley_agent.run(Accepter(), self.parse("--dial-out", "http://127.0.0.1:1"))

    def test_bad_url(self):
        with self.assertRaises(ValueError):
            parley_agent.Link(Accepter(), "ftp://x", "pt_x", "b").run()

    def test_unreachable_gateway_is_an_rpc_error(self):
        link = parley_agent.Link(Accepter(), "http://127.0.0.1:1", "pt_x", "b")
        with self.assertRaises(grpc.RpcError):
            link.run()


if __name__ == "__main__":
    unittest.main()
