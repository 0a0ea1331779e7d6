"""Small builders for moves, messages and actions, so an agent's act() stays short.

Every builder returns a generated protobuf message (parley.game.v1 / parley.agent.v1); nothing
here checks legality, which is the referee's job (a refused move comes back to the agent in
Observation.last_rejection).
"""

from parley.agent.v1 import agent_pb2
from parley.game.v1 import game_pb2

# Move kinds, as listed in Observation.legal_moves.
PROPOSE = game_pb2.MOVE_KIND_PROPOSE
ACCEPT = game_pb2.MOVE_KIND_ACCEPT
REJECT = game_pb2.MOVE_KIND_REJECT
PASS = game_pb2.MOVE_KIND_PASS
CHOOSE = game_pb2.MOVE_KIND_CHOOSE


def is_legal(observation, kind):
    """True when a move of this kind (e.g. ACCEPT) is legal in the observation."""
    return kind in observation.legal_moves


def share(seat, gives=None, receives=None):
    """One seat's part of an Allocation: what it hands over and what it takes, by resource."""
    return game_pb2.SeatShare(seat=seat, gives=dict(gives or {}), receives=dict(receives or {}))


def propose(*shares):
    """A proposal move whose terms are an Allocation of the given SeatShares."""
    allocation = game_pb2.Allocation(shares=list(shares))
    return game_pb2.Move(propose=game_pb2.Propose(proposal=game_pb2.Proposal(allocation=allocation)))


def propose_ultimatum(x, currency="Dollars"):
    """Ultimatum proposal: P1 (seat 0) gives x of its money to P2; P2's side stays empty.

    Whichever seat proposes, x is always the amount P2 ends up with. Pass the game's currency
    (View.params.currency) when it is not the default.
    """
    return propose(share(0, gives={currency: int(x)}))


def propose_amount(bound, amount, observation=None):
    """A proposal filling the one amount a Bound describes (its seat, side, resource).

    Given the observation, it also carries every amount the observation's proposal_bounds fix
    (min = max, e.g. the seller's 1 item in buysell): the referee fills in nothing, and refuses
    a proposal that leaves out an amount the rules require.
    """
    shares = {}

    def put(b, value):
        sh = shares.setdefault(b.seat, game_pb2.SeatShare(seat=b.seat))
        side = sh.receives if b.side == game_pb2.SHARE_SIDE_RECEIVES else sh.gives
        side[b.resource] = int(value)

    if observation is not None:
        for b in observation.proposal_bounds:
            if b.min == b.max:
                put(b, b.min)
    put(bound, amount)
    return propose(*(shares[seat] for seat in sorted(shares)))


def accept(proposal_turn=0):
    """Accept the standing proposal. A non-zero proposal_turn makes the referee refuse the
    accept if the standing proposal is not the one made on that turn (stale observation)."""
    return game_pb2.Move(accept=game_pb2.Accept(proposal_turn=proposal_turn))


def reject():
    """Reject: in the ultimatum game this ends the match with nothing for either seat."""
    return game_pb2.Move(reject=game_pb2.Reject())


def pass_turn():
    """No game move this turn (messages may still be sent). Named so as not to shadow `pass`."""
    return game_pb2.Move(**{"pass": game_pb2.Pass()})


def choose(option):
    """Pick the option with this id (one of Observation.choices)."""
    return game_pb2.Move(choose=game_pb2.Choose(option=option))


def say(text, to=None):
    """A message. to=None (or empty) is public, to every other seat; otherwise a seat number or
    a list of seat numbers, who alone (with the sender) will read it."""
    if to is None:
        recipients = []
    elif isinstance(to, int):
        recipients = [to]
    else:
        recipients = list(to)
    return game_pb2.Message(to=recipients, text=text)


def action(move, *messages, reasoning="", notes="", usage=None):
    """The Action an act() returns: a move, any messages, private reasoning (kept in the record,
    never sent to other seats) and private notes (returned to this seat in later
    observations, in Observation.notes)."""
    a = agent_pb2.Action(move=move, messages=list(messages), private_reasoning=reasoning, private_notes=notes)
    if usage is not None:
        a.usage.CopyFrom(usage)
    return a


def find_bound(observation, seat=None, side=None, resource=None):
    """The first of observation.proposal_bounds matching every criterion given, or None."""
    for b in observation.proposal_bounds:
        if seat is not None and b.seat != seat:
            continue
        if side is not None and b.side != side:
            continue
        if resource is not None and b.resource != resource:
            continue
        return b
    return None


def clamp(bound, value):
    """value moved into [bound.min, bound.max]; into [bound.min, ...) when bound.max_unknown says
    no upper limit is known (another seat's hidden holdings: the referee refuses too much)."""
    v = max(bound.min, int(value))
    return v if bound.max_unknown else min(bound.max, v)


def standing_proposal_turn(observation, by=None):
    """Turn of the latest proposal in the visible history made by another seat (or by seat
    `by`), for accept(proposal_turn=...); 0 when none is visible, which means "whatever
    proposal stands now"."""
    for entry in reversed(observation.history):
        if entry.from_referee or entry.seat == observation.seat:
            continue
        if by is not None and entry.seat != by:
            continue
        if entry.HasField("move") and entry.move.WhichOneof("kind") == "propose":
            return entry.turn
    return 0
