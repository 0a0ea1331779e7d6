"""Example Parley bot for the multi-turn ultimatum game: a steady conceder.

Run:  /usr/bin/python3 agents/python/example_bot.py --listen 127.0.0.1:50061

Strategy (deterministic, and legal in every observation it is sent):
  * Accept the standing offer when it gives this seat at least a threshold: 40% of the pot while
    it still has several turns ahead, falling linearly to "anything positive" on its last
    chance to act.
  * Otherwise propose a split asking for ~60% of the pot at first, conceding toward 50% as its
    turns run out (never asking for more than it asked before, which it reads from its own
    private notes: the bot keeps no state between calls).
  * Otherwise (last turn: only accept or reject) accept anything positive, reject nothing.
  * After a refused action, fall back to the simplest legal move.
"""

import argparse
import logging
import re
import sys

from parley_agent import (
    ACCEPT,
    CHOOSE,
    PASS,
    PROPOSE,
    REJECT,
    Agent,
    action,
    accept,
    add_mode_arguments,
    choose,
    clamp,
    find_bound,
    game_pb2,
    is_legal,
    pass_turn,
    propose_amount,
    propose_ultimatum,
    reject,
    run,
    say,
    standing_proposal_turn,
)

# Defaults of parley.games.ultimatum.v1.Params, used when a field is unset.
DEFAULT_TOTAL = 100
DEFAULT_MAX_TURNS = 8
DEFAULT_CURRENCY = "Dollars"

_ASKED = re.compile(r"asked for (\d+)")


def params(obs):
    """(total, max_turns, currency) of the match, defaults filled in for unset fields."""
    p = obs.ultimatum.params  # an unset view reads as all defaults
    total = p.total if p.HasField("total") else DEFAULT_TOTAL
    max_turns = p.max_turns if p.HasField("max_turns") else (obs.max_turns or DEFAULT_MAX_TURNS)
    currency = p.currency if p.HasField("currency") else DEFAULT_CURRENCY
    return total, max_turns, currency


def _ceil_div(a, b):
    return -(-a // b)


class SteadyConceder(Agent):
    """Asks for about 60% of the pot, conceding toward 50% over its turns; accepts 40% or more
    early and anything positive on its last chance."""

    name = "steady-conceder"
    version = "0.1.0"
    author = "Parley examples"
    games = ["ultimatum"]

    def act(self, obs):
        if obs.WhichOneof("view") != "ultimatum":
            return self.fallback(obs, "not an ultimatum observation")
        if obs.HasField("last_rejection"):
            r = obs.last_rejection
            why = "%s: %s" % (game_pb2.RejectionCode.Name(r.code), r.message)
            return self.fallback(obs, "my previous attempt was refused (%s)" % why)
        return self.play(obs)

    def play(self, obs):
        view = obs.ultimatum
        total, max_turns, currency = params(obs)
        me = obs.seat  # 0 = P1 (holds the money), 1 = P2

        def mine(x):  # x is always what P2 gets
            return x if me == 1 else total - x

        # Seats alternate, so this seat acts again every second turn.
        later = view.turns_left // 2  # my turns after this one
        horizon = max(1, (max_turns - 1) // 2)  # most turns I could have after my first
        later = min(later, horizon)

        # Accept threshold: 40% of the pot with the whole horizon ahead, 1 on the last chance.
        threshold = max(1, _ceil_div(4 * total * later, 10 * horizon))
        # Own share to ask for: 60% with the whole horizon ahead, 50% with no turn left after.
        ask = _ceil_div(total * (50 * horizon + 10 * later), 100 * horizon)
        previous = self.previous_ask(obs)
        if previous is not None:
            ask = min(ask, previous)

        has_offer = view.HasField("standing_offer")
        offer = mine(view.standing_offer) if has_offer else None
        situation = "turn %d of %d, %d turns left (%d more for me); offer to me: %s; I accept %d+, I'd ask %d%s" % (
            obs.turn,
            max_turns,
            view.turns_left,
            later,
            "none" if offer is None else offer,
            threshold,
            ask,
            "" if previous is None else " (my notes: last ask %d)" % previous,
        )

        if is_legal(obs, ACCEPT) and has_offer and offer >= threshold:
            by = view.standing_proposer if view.HasField("standing_proposer") else None
            return action(
                accept(standing_proposal_turn(obs, by=by)),
                say("Deal. %d %s for me works." % (offer, currency)),
                reasoning=situation + " -> accept",
                notes="turn %d: accepted %d" % (obs.turn, offer),
            )

        if is_legal(obs, PROPOSE):
            x = ask if me == 1 else total - ask
            move, x = self.proposal(obs, x, currency)
            got = mine(x)
            return action(
                move,
                say("I propose %d %s for P2 and %d for P1." % (x, currency, total - x)),
                reasoning=situation + " -> propose %d for P2 (%d for me)" % (x, got),
                notes="turn %d: asked for %d" % (obs.turn, got),
            )

        if is_legal(obs, ACCEPT) and has_offer and offer > 0:
            return action(
                accept(),
                say("Something beats nothing: I accept %d %s." % (offer, currency)),
                reasoning=situation + " -> no proposal possible, accept a positive offer",
                notes="turn %d: accepted %d" % (obs.turn, offer),
            )

        if is_legal(obs, REJECT):
            return action(
                reject(),
                say("An offer of nothing is no deal. I reject."),
                reasoning=situation + " -> nothing positive to accept, reject",
                notes="turn %d: rejected" % obs.turn,
            )

        return self.fallback(obs, situation + "; no planned move is legal")

    @staticmethod
    def previous_ask(obs):
        """The share this seat last asked for, read back from its own notes (newest first)."""
        for note in reversed(obs.notes):
            m = _ASKED.search(note)
            if m:
                return int(m.group(1))
        return None

    @staticmethod
    def proposal(obs, x, currency):
        """A proposal giving P2 about x, kept inside observation.proposal_bounds. Returns the
        move and the amount actually proposed."""
        bound = find_bound(obs, seat=0, side=game_pb2.SHARE_SIDE_GIVES) or find_bound(obs)
        if bound is None:
            return propose_ultimatum(x, currency), x
        x = clamp(bound, x)
        return propose_amount(bound, x, obs), x

    def fallback(self, obs, why):
        """The simplest legal move: accept, else an even split within bounds, else reject, pass
        or the first option."""
        notes = "turn %d: fallback" % obs.turn
        if is_legal(obs, ACCEPT):
            move, text = accept(), "I accept."
        elif is_legal(obs, PROPOSE):
            total, _, currency = params(obs)
            move, x = self.proposal(obs, total // 2, currency)
            text = "I propose %d %s for P2." % (x, currency)
            notes = "turn %d: fallback, asked for %d" % (obs.turn, x if obs.seat == 1 else total - x)
        elif is_legal(obs, REJECT):
            move, text = reject(), "I reject."
        elif is_legal(obs, CHOOSE) and obs.choices and not is_legal(obs, PASS):
            move, text = choose(obs.choices[0].id), "I choose %s." % obs.choices[0].label
        else:
            move, text = pass_turn(), "I pass."
        return action(move, say(text), reasoning=why + " -> fallback", notes=notes)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Example Parley ultimatum bot (a steady conceder), served over gRPC or dialling out to a gateway.")
    add_mode_arguments(parser)  # --listen ADDR, or --dial-out URL --token T --bot NAME
    parser.add_argument("--grace", type=float, default=5.0, help="seconds calls in flight get to finish on SIGINT/SIGTERM (default %(default)s)")
    parser.add_argument("--log-level", default="WARNING", help="logging level for stderr (default %(default)s)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        run(SteadyConceder(), args, grace=args.grace)
    except (RuntimeError, ValueError, argparse.ArgumentTypeError) as err:  # a port taken, a refused bot, a bad URL
        print("example_bot: %s" % err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
