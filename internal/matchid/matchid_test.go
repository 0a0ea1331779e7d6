package matchid

import "testing"

func TestRequested(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"t-a00-g001", "t-a00-g001"},
		{Rerun("t-a00-g001", 1), "t-a00-g001"},
		{Rerun(Rerun("t-a00-g001", 3), 12), "t-a00-g001"},
		{"t-r", "t-r"},         // no digits
		{"t-rx1", "t-rx1"},     // not digits
		{"-r1", "-r1"},         // nothing before the suffix
		{"cup-run", "cup-run"}, // a word, not a rerun
	} {
		if got := Requested(tc.id); got != tc.want {
			t.Errorf("Requested(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
