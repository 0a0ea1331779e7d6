"""parley_agent: serve a Parley agent written in Python.

Write one class with ``act(self, observation) -> Action`` (and optionally ``describe(self) ->
AgentInfo``, or the attributes ``name``, ``version``, ``author``, ``games``, ``description``),
then call ``serve(agent, address)``. The package puts the generated protobuf code
(gen/python at the repository root) on ``sys.path`` itself, so no PYTHONPATH is needed.

    from parley_agent import serve, accept, propose_ultimatum, say, action

    class Fair:
        name = "fair"
        def act(self, obs):
            return action(propose_ultimatum(50), say("half each?"))

    serve(Fair(), "127.0.0.1:50061")
"""

import os
import sys

# Repository root = agents/python/../.. relative to this package; the generated code lives in
# <root>/gen/python and imports itself as top-level "parley.…", so that directory must be on
# sys.path before anything below imports it.
_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
GEN_PYTHON = os.path.join(_ROOT, "gen", "python")
if GEN_PYTHON not in sys.path:
    sys.path.insert(0, GEN_PYTHON)

from parley.agent.v1 import agent_pb2, agent_pb2_grpc  # noqa: E402
from parley.game.v1 import game_pb2  # noqa: E402
from parley.games.ultimatum.v1 import ultimatum_pb2  # noqa: E402

from .moves import (  # noqa: E402
    ACCEPT,
    CHOOSE,
    PASS,
    PROPOSE,
    REJECT,
    accept,
    action,
    choose,
    clamp,
    find_bound,
    is_legal,
    pass_turn,
    propose,
    propose_amount,
    propose_ultimatum,
    reject,
    say,
    share,
    standing_proposal_turn,
)
from .server import Agent, AgentServicer, serve, start  # noqa: E402
from .dialout import DialRefused, Link, add_mode_arguments, dial_out, run  # noqa: E402

__all__ = [
    "GEN_PYTHON",
    "agent_pb2",
    "agent_pb2_grpc",
    "game_pb2",
    "ultimatum_pb2",
    "Agent",
    "AgentServicer",
    "serve",
    "start",
    "DialRefused",
    "Link",
    "add_mode_arguments",
    "dial_out",
    "run",
    "ACCEPT",
    "CHOOSE",
    "PASS",
    "PROPOSE",
    "REJECT",
    "accept",
    "action",
    "choose",
    "clamp",
    "find_bound",
    "is_legal",
    "pass_turn",
    "propose",
    "propose_amount",
    "propose_ultimatum",
    "reject",
    "say",
    "share",
    "standing_proposal_turn",
]
