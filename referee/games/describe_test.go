package games_test

import (
	"strings"
	"testing"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func proposeMove(shares ...*gamev1.SeatShare) *gamev1.Move {
	return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}},
	}}}}
}

func TestDescribeMove(t *testing.T) {
	names := []string{"P1", "P2"}
	tests := []struct {
		name string
		move *gamev1.Move
		want string
	}{
		{"propose", proposeMove(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": 40}}), "proposes: P1 gives 40 Dollars"},
		{"propose nothing", proposeMove(), "proposes: nothing changes hands"},
		{"propose without a proposal", &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}, "proposes: no terms"},
		{"propose without terms", &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{}}}}, "proposes: no terms"},
		{"accept", &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{ProposalTurn: 3}}}, "accepts"},
		{"reject", &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, "rejects"},
		{"pass", &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, "passes"},
		{"choose", &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "cooperate"}}}, "chooses cooperate"},
		{"empty oneof", &gamev1.Move{}, "makes no move"},
		{"nil move", nil, "makes no move"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := games.DescribeMove(tc.move, names); got != tc.want {
				t.Errorf("DescribeMove = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDescribeAllocation(t *testing.T) {
	names := []string{"Alice", "Bob", ""}
	tests := []struct {
		name  string
		alloc *gamev1.Allocation
		want  string
	}{
		{"nil", nil, "nothing changes hands"},
		{"no shares", &gamev1.Allocation{}, "nothing changes hands"},
		{"only zeros", &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"hats": 0}, Receives: map[string]int64{"balls": 0}}}}, "nothing changes hands"},
		{
			name: "gives and receives, in share order, resources sorted",
			alloc: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 1, Gives: map[string]int64{"hats": 2, "books": 1}, Receives: map[string]int64{"balls": 3}},
				{Seat: 0, Receives: map[string]int64{"hats": 2, "books": 1}, Gives: map[string]int64{"balls": 3}},
			}},
			want: "Bob gives 1 books, 2 hats; Bob receives 3 balls; Alice gives 3 balls; Alice receives 1 books, 2 hats",
		},
		{
			name: "zero amounts left out, and a share with only zeros says nothing",
			alloc: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 0, Gives: map[string]int64{"Dollars": 0}},
				{Seat: 1, Receives: map[string]int64{"Dollars": 40, "Euros": 0}},
			}},
			want: "Bob receives 40 Dollars",
		},
		{
			name: "a division of a pool lists every share, zeros included",
			alloc: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 0, Receives: map[string]int64{"g": 500}},
				{Seat: 1, Receives: map[string]int64{"g": 0}},
				{Seat: 2, Receives: map[string]int64{"g": 3, "kg": 0}},
				{Seat: 1},
			}},
			want: "Alice 500 g; Bob 0 g; seat 2 3 g; Bob nothing",
		},
		{
			name: "unnamed and unknown seats",
			alloc: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 2, Gives: map[string]int64{"x": 1}},
				{Seat: 5, Receives: map[string]int64{"x": 1}},
				{Seat: -1, Gives: map[string]int64{"y": -3}},
			}},
			want: "seat 2 gives 1 x; seat 5 receives 1 x; seat -1 gives -3 y",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := games.DescribeAllocation(tc.alloc, names); got != tc.want {
				t.Errorf("DescribeAllocation =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestDescribeBundle(t *testing.T) {
	tests := []struct {
		name   string
		bundle map[string]int64
		want   string
	}{
		{"nil", nil, ""},
		{"empty", map[string]int64{}, ""},
		{"zeros only", map[string]int64{"a": 0, "b": 0}, ""},
		{"one", map[string]int64{"Dollars": 40}, "40 Dollars"},
		{"sorted by name, bytewise", map[string]int64{"hats": 2, "Zebras": 1, "apples": 7, "balls": 0}, "1 Zebras, 7 apples, 2 hats"},
		{"negative kept", map[string]int64{"debt": -5}, "-5 debt"},
		{"large", map[string]int64{"coins": 9007199254740993}, "9007199254740993 coins"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := games.DescribeBundle(tc.bundle); got != tc.want {
				t.Errorf("DescribeBundle(%v) = %q, want %q", tc.bundle, got, tc.want)
			}
		})
	}
}

func TestSeatName(t *testing.T) {
	names := []string{"P1", "", "Carol"}
	tests := []struct {
		name  string
		seat  games.Seat
		names []string
		want  string
	}{
		{"named", 0, names, "P1"},
		{"last named", 2, names, "Carol"},
		{"empty name", 1, names, "seat 1"},
		{"past the end", 3, names, "seat 3"},
		{"negative", -1, names, "seat -1"},
		{"no names", 0, nil, "seat 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := games.SeatName(tc.seat, tc.names); got != tc.want {
				t.Errorf("SeatName(%d) = %q, want %q", tc.seat, got, tc.want)
			}
		})
	}
}

// TestKindOf sets each branch of Move's oneof in turn and finds the kind named after it, so a
// branch added to the contract without a kind is caught.
func TestKindOf(t *testing.T) {
	branches := (&gamev1.Move{}).ProtoReflect().Descriptor().Oneofs().ByName("kind").Fields()
	if branches.Len() == 0 {
		t.Fatal("Move has no kind branches")
	}
	for i := range branches.Len() {
		f := branches.Get(i)
		m := &gamev1.Move{}
		m.ProtoReflect().Set(f, protoreflect.ValueOfMessage(m.ProtoReflect().NewField(f).Message()))
		want := "MOVE_KIND_" + strings.ToUpper(string(f.Name()))
		if got := games.KindOf(m).String(); got != want {
			t.Errorf("KindOf(%s) = %s, want %s", f.Name(), got, want)
		}
	}
	if got := games.KindOf(&gamev1.Move{}); got != gamev1.MoveKind_MOVE_KIND_UNSPECIFIED {
		t.Errorf("KindOf(no move) = %s", got)
	}
}
