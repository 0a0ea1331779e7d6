package natsname

import (
	"strings"
	"testing"
)

// matches reports whether subject matches a NATS filter: "*" stands for one token, a final
// ">" for one or more.
func matches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">":
			return i == len(f)-1 && len(s) > i
		case i >= len(s):
			return false
		case tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}

// Each subject a package builds must be captured by the filter of the stream (or consumer)
// that is meant to hold it, and by no other stream's: a subject two streams capture is
// refused by JetStream, one no stream captures is lost.
func TestSubjectsLandInTheirStream(t *testing.T) {
	streams := map[string][]string{
		MatchStream:      {AllMatches},
		RequestStream:    {AllRequests},
		TournamentStream: {AllTournaments, AllRetries, AllCancels},
	}
	tests := []struct {
		subject, stream string
		filters         []string // narrower filters that must select it too
	}{
		{MatchSubject("m-1", "match_started"), MatchStream, []string{MatchFilter("m-1"), EventFilter("match_started")}},
		{MatchSubject("T_a1-g2", "action_taken"), MatchStream, []string{MatchFilter("T_a1-g2"), EventFilter("action_taken")}},
		{RequestSubject("07", "m-1"), RequestStream, []string{LaneRequests("07"), AnyLaneRequest("m-1")}},
		{LegacyRequestSubject("m-1"), RequestStream, []string{LegacyRequests}},
		{TournamentSpecSubject("cup"), TournamentStream, []string{AllTournamentSpecs}},
		{TournamentRequestSubject("cup"), TournamentStream, []string{AllTournamentRequests}},
		{TournamentSchedulePartSubject("cup", 3), TournamentStream, nil},
		{RetrySubject("m-1"), TournamentStream, nil},
		{CancelMatchSubject("m-1"), TournamentStream, []string{AllCancels}},
		{CancelTournamentSubject("cup"), TournamentStream, []string{AllCancels}},
	}
	for _, tc := range tests {
		for name, filters := range streams {
			in := false
			for _, f := range filters {
				in = in || matches(f, tc.subject)
			}
			if in != (name == tc.stream) {
				t.Errorf("%s captured by %s: %v, want %v", tc.subject, name, in, name == tc.stream)
			}
		}
		for _, f := range tc.filters {
			if !matches(f, tc.subject) {
				t.Errorf("filter %s does not select %s", f, tc.subject)
			}
		}
	}
	// Filters of one kind select nothing of another.
	if matches(AllTournamentSpecs, TournamentRequestSubject("cup")) || matches(AllTournamentRequests, TournamentSpecSubject("cup")) {
		t.Error("the spec and request filters overlap")
	}
	if part := TournamentSchedulePartSubject("cup", 0); matches(AllTournamentSpecs, part) || matches(AllTournamentRequests, part) {
		t.Error("a schedule part is selected as a spec or a request")
	}
	if matches(MatchFilter("m-1"), MatchSubject("m-10", "match_started")) {
		t.Error("one match's filter selects another match")
	}
	// Bot links and live news are core NATS subjects outside every stream.
	for _, s := range []string{BotCallSubject("acme", "fair"), BotPingSubject("acme", "fair"), BotTakeoverSubject("acme", "fair"), LiveSubject("m-1")} {
		for name, filters := range streams {
			for _, f := range filters {
				if matches(f, s) {
					t.Errorf("%s is captured by stream %s", s, name)
				}
			}
		}
	}
}

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		f, s string
		want bool
	}{
		{"a.>", "a.b", true}, {"a.>", "a", false}, {"a.*", "a.b.c", false}, {"a.*.c", "a.b.c", true}, {"a.b", "a.c", false},
	} {
		if got := matches(tc.f, tc.s); got != tc.want {
			t.Errorf("matches(%q, %q) = %v", tc.f, tc.s, got)
		}
	}
}

func TestMatchOf(t *testing.T) {
	for _, tc := range []struct{ subject, want string }{
		{MatchSubject("m-1", "match_started"), "m-1"},
		{MatchSubject("T_a1-g2-r3", "action_taken"), "T_a1-g2-r3"},
		{RequestSubject("07", "m-1"), ""},
		{"parley.match.nodot", ""},
	} {
		if got := MatchOf(tc.subject); got != tc.want {
			t.Errorf("MatchOf(%q) = %q, want %q", tc.subject, got, tc.want)
		}
	}
}

// A work-queue stream refuses consumers whose filters overlap: each lane's filter and the
// legacy one select only their own requests.
func TestLaneFiltersAreDisjoint(t *testing.T) {
	subjects := map[string]string{
		LaneRequests("07"): RequestSubject("07", "m-1"),
		LaneRequests("08"): RequestSubject("08", "m-1"),
		LegacyRequests:     LegacyRequestSubject("m-1"),
	}
	for filter := range subjects {
		for owner, subject := range subjects {
			if got := matches(filter, subject); got != (owner == filter) {
				t.Errorf("matches(%q, %q) = %v", filter, subject, got)
			}
		}
	}
}
