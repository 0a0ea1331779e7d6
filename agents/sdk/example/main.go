// Command example is a complete Parley bot in Go, written against the SDK only: a team copies
// it and changes the strategy. It plays the multi-turn ultimatum game: it asks for a bit more
// than half and settles for half, accepts any standing offer worth at least what it would ask
// for next, and on its last chance takes anything positive.
//
//	go run ./agents/sdk/example --listen 127.0.0.1:50081                    # serve
//	go run ./agents/sdk/example --dial-out http://localhost:8080 --token T --bot NAME
//
// It reads only the observation, so a restarted bot carries on where the last one stopped.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// halfway asks for ask percent of the pot on its first proposal and concedes to 50 by its last.
type halfway struct{ ask int64 }

func (h halfway) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{Name: "halfway", Version: "1.0.0", Author: "Parley examples", Games: []string{"ultimatum"},
		Description: "asks for a bit more than half, settles for half"}
}

func (h halfway) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetUltimatum()
	if view == nil {
		return nil, fmt.Errorf("halfway plays the ultimatum game only, not %q", obs.GetGame())
	}
	legal := func(k gamev1.MoveKind) bool { return slices.Contains(obs.GetLegalMoves(), k) }
	total, currency := view.GetParams().GetTotal(), view.GetParams().GetCurrency() // resolved: defaults filled in
	p2 := obs.GetSeat() == 1
	mine := func(toP2 int64) int64 { // every amount in this game is what P1 hands to P2
		if p2 {
			return toP2
		}
		return total - toP2
	}
	// My share to ask for now: from h.ask percent down to 50 as my turns run out.
	myTurns := (view.GetTurnsLeft() + 1) / 2
	want := total * (50 + (h.ask-50)*min(int64(myTurns), 4)/4) / 100

	if offer := view.StandingOffer; offer != nil && legal(gamev1.MoveKind_MOVE_KIND_ACCEPT) {
		if got := mine(*offer); got >= want || (!legal(gamev1.MoveKind_MOVE_KIND_PROPOSE) && got > 0) {
			return act(&gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, fmt.Sprintf("Deal: %d for me.", got)), nil
		}
	}
	if legal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		toP2 := want
		if !p2 {
			toP2 = total - want
		}
		// Stay inside the bound the referee gives for the amount P1 hands over.
		for _, b := range obs.GetProposalBounds() {
			if b.GetSeat() == 0 && b.GetSide() == gamev1.ShareSide_SHARE_SIDE_GIVES {
				toP2 = min(max(toP2, b.GetMin()), b.GetMax())
			}
		}
		split := &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{currency: toP2}}}}
		move := &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: split}}}}}
		return act(move, fmt.Sprintf("I propose %d %s for P2 and %d for P1.", toP2, currency, total-toP2)), nil
	}
	if legal(gamev1.MoveKind_MOVE_KIND_REJECT) {
		return act(&gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, "No deal."), nil
	}
	return act(&gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, ""), nil
}

// act is an action with the move and, when there is one, a public message.
func act(m *gamev1.Move, say string) *agentv1.Action {
	a := &agentv1.Action{Move: m}
	if say != "" {
		a.Messages = []*gamev1.Message{{Text: say}}
	}
	return a
}

func main() {
	var mode sdk.Mode
	mode.Bind(flag.CommandLine, "127.0.0.1:50081")
	mode.OnListen = func(addr string) { fmt.Println("listening on", addr) }
	mode.DialOut.OnWelcome = func(addr string) { fmt.Println("connected as", addr) }
	ask := flag.Int64("ask", 60, "percent of the pot asked for on the first proposal (50 to 100)")
	flag.Parse()
	if *ask < 50 || *ask > 100 {
		fmt.Fprintf(os.Stderr, "example: --ask must be 50 to 100, got %d\n", *ask)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := sdk.Run(ctx, mode, halfway{ask: *ask}, sdk.WithLogger(logger))
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "example: %v\n", err)
		os.Exit(1)
	}
}
