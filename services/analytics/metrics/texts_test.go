package metrics_test

import (
	"slices"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// rawReader reads the raw outputs of game "r".
type rawReader struct{}

func (rawReader) Games() []string { return []string{"r"} }
func (rawReader) Match([]*eventsv1.MatchEvent) ([]metrics.Value, error) {
	return nil, nil
}
func (rawReader) Texts() metrics.Texts { return metrics.RawOutputs }

// The texts a set of games needs are those their families say they read, every text for a
// family that does not say (so a family that reads a text it never declared still gets it),
// none for a game without a family; what is not needed is what a read may leave out.
func TestRegistryTexts(t *testing.T) {
	reg, err := metrics.NewRegistry(fakeFamily{}, rawReader{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		games []string
		want  metrics.Texts
		leave []string
	}{
		{nil, 0, []string{"private_reasoning", "private_notes", "raw_outputs"}},
		{[]string{"r", "r", "unknown"}, metrics.RawOutputs, []string{"private_reasoning", "private_notes"}},
		{[]string{"r", "g"}, metrics.AllTexts, nil},
	} {
		got := reg.Texts(c.games...)
		if got != c.want {
			t.Errorf("Texts(%q) = %b, want %b", c.games, got, c.want)
		}
		var leave []string
		for _, f := range got.Unread() {
			leave = append(leave, string(f.Name()))
		}
		if !slices.Equal(leave, c.leave) {
			t.Errorf("Texts(%q).Unread() = %q, want %q", c.games, leave, c.leave)
		}
	}
}
