package analytics

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// diffRows describes how two rows differ, or returns "" when they are equal.
func diffRows(got, want metrics.Row) string {
	if len(got.Usage) != len(want.Usage) {
		return fmt.Sprintf("usage: %d seats, want %d", len(got.Usage), len(want.Usage))
	}
	for i := range got.Usage {
		if !proto.Equal(got.Usage[i], want.Usage[i]) {
			return fmt.Sprintf("usage %d: %v, want %v", i, got.Usage[i], want.Usage[i])
		}
	}
	g, w := got, want
	g.Usage, w.Usage = nil, nil
	if len(g.Values) == 0 {
		g.Values = nil
	}
	if len(w.Values) == 0 {
		w.Values = nil
	}
	if !reflect.DeepEqual(g.Seats, w.Seats) {
		return fmt.Sprintf("seats: %+v, want %+v", g.Seats, w.Seats)
	}
	if !reflect.DeepEqual(g.Values, w.Values) {
		return fmt.Sprintf("values:\n got  %v\n want %v", g.Values, w.Values)
	}
	if !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("%+v, want %+v", g, w)
	}
	return ""
}
