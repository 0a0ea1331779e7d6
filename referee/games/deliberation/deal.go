package deliberation

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Deal is a complete deal: Deal[i] is the option (0-based) chosen on issue i.
type Deal []int

// Equal reports whether two deals choose the same options.
func (d Deal) Equal(e Deal) bool {
	if len(d) != len(e) {
		return false
	}
	for i := range d {
		if d[i] != e[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of d.
func (d Deal) Clone() Deal { return append(Deal(nil), d...) }

// ParseDeal reads a deal written as option ids separated by commas or spaces, in any order and
// any case, e.g. "A1,B1,C4,D1,E5", or says what is wrong: an unknown option, an issue left out
// or an issue named twice.
func (s *Setup) ParseDeal(text string) (Deal, error) { return parseDeal(s.Issues, text) }

func parseDeal(issues []Issue, text string) (Deal, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\t' || r == '\n' || r == '\r' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("the deal is empty; %s", dealRule(issues))
	}
	choices := make([]choice, 0, len(fields))
	for _, f := range fields {
		choices = append(choices, choice{issue: "", option: f})
	}
	return readChoices(issues, choices)
}

// choice is one issue-option pair as written; issue may be empty (read from the option id).
type choice struct{ issue, option string }

// DealFromProto reads a generic Deal, or says what is wrong with it in words fit for the agent.
func (s *Setup) DealFromProto(d *gamev1.Deal) (Deal, error) {
	if len(d.GetChoices()) == 0 {
		return nil, fmt.Errorf("the deal has no choices; %s", dealRule(s.Issues))
	}
	choices := make([]choice, len(d.GetChoices()))
	for i, c := range d.GetChoices() {
		choices[i] = choice{issue: c.GetIssue(), option: c.GetOption()}
	}
	return readChoices(s.Issues, choices)
}

// readChoices resolves written choices against the issues.
func readChoices(issues []Issue, choices []choice) (Deal, error) {
	out := make(Deal, len(issues))
	for i := range out {
		out[i] = -1
	}
	for _, c := range choices {
		i, k, ok := findOption(issues, c.option)
		if !ok {
			return nil, fmt.Errorf("the deal names %q, which is no option; %s", c.option, dealRule(issues))
		}
		if c.issue != "" && !strings.EqualFold(strings.TrimSpace(c.issue), issues[i].ID) {
			return nil, fmt.Errorf("the deal chooses %s on issue %q, but %s is an option of issue %s; %s", issues[i].OptionID(k), c.issue, issues[i].OptionID(k), issues[i].ID, dealRule(issues))
		}
		if out[i] >= 0 {
			return nil, fmt.Errorf("the deal names two options of issue %s (%s and %s); %s", issues[i].ID, issues[i].OptionID(out[i]), issues[i].OptionID(k), dealRule(issues))
		}
		out[i] = k
	}
	var missing []string
	for i, k := range out {
		if k < 0 {
			missing = append(missing, issues[i].ID)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the deal names no option of issue %s; %s", strings.Join(missing, ", "), dealRule(issues))
	}
	return out, nil
}

// findOption finds an option by id, e.g. "b2", as (issue, option) indexes.
func findOption(issues []Issue, id string) (int, int, bool) {
	id = strings.ToUpper(strings.TrimSpace(id))
	for i, is := range issues {
		rest, ok := strings.CutPrefix(id, is.ID)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || rest != strconv.Itoa(n) || n < 1 || n > len(is.Options) {
			return 0, 0, false
		}
		return i, n - 1, true
	}
	return 0, 0, false
}

// dealRule says what a legal deal is, e.g. "a complete deal names one option of each issue:
// A1-A3, B1-B3, C1-C4".
func dealRule(issues []Issue) string {
	parts := make([]string, len(issues))
	for i, is := range issues {
		if len(is.Options) == 1 {
			parts[i] = is.OptionID(0)
		} else {
			parts[i] = is.OptionID(0) + "-" + is.OptionID(len(is.Options)-1)
		}
	}
	return "a complete deal names exactly one option of each issue: " + strings.Join(parts, ", ")
}

// DealString writes d as "A1,B1,C4,D1,E5".
func (s *Setup) DealString(d Deal) string { return dealString(s.Issues, d) }

func dealString(issues []Issue, d Deal) string {
	parts := make([]string, len(d))
	for i, k := range d {
		parts[i] = issues[i].OptionID(k)
	}
	return strings.Join(parts, ",")
}

// DealText writes d with its option names, e.g. "A1,B2,C4 (A1 water-based; B2 keep the
// balance; C4 no union preference)".
func (s *Setup) DealText(d Deal) string {
	names := make([]string, len(d))
	for i, k := range d {
		names[i] = s.Issues[i].OptionID(k) + " " + s.Issues[i].Options[k]
	}
	return s.DealString(d) + " (" + strings.Join(names, "; ") + ")"
}

// DealProto writes d as a generic Deal, issues in order.
func (s *Setup) DealProto(d Deal) *gamev1.Deal {
	out := &gamev1.Deal{Choices: make([]*gamev1.IssueChoice, len(d))}
	for i, k := range d {
		out.Choices[i] = &gamev1.IssueChoice{Issue: s.Issues[i].ID, Option: s.Issues[i].OptionID(k)}
	}
	return out
}

// DealCount returns the number of complete deals.
func (s *Setup) DealCount() int {
	n := 1
	for _, is := range s.Issues {
		n *= len(is.Options)
	}
	return n
}

// Deals calls yield with every complete deal in lexical order (A1,B1,... first; the last
// issue's option changes fastest) until yield returns false. The deal passed is reused
// between calls: clone it to keep it.
func (s *Setup) Deals(yield func(Deal) bool) {
	d := make(Deal, len(s.Issues))
	for {
		if !yield(d) {
			return
		}
		i := len(d) - 1
		for ; i >= 0; i-- {
			d[i]++
			if d[i] < len(s.Issues[i].Options) {
				break
			}
			d[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// DealForm is the generic form of a complete deal, for proposal_forms and message_term_forms,
// with what each option is worth to seat.
func (s *Setup) DealForm(seat int) *gamev1.ProposalForm {
	return s.form("deal", seat, nil)
}

// fixedForm is the form of the one deal d: every issue offers only d's option.
func (s *Setup) fixedForm(d Deal, label string, seat int) *gamev1.ProposalForm {
	return s.form(label, seat, d)
}

// form offers every option of each issue, or only fixed's when it is set, and says what each
// is worth to seat and seat's minimum score (ProposalForm.worth: seat's own secrets, set in
// seat's observation only).
func (s *Setup) form(label string, seat int, fixed Deal) *gamev1.ProposalForm {
	p := s.Parties[seat]
	w := &gamev1.Worth{OptionPoints: map[string]int64{}, Minimum: proto.Int64(int64(p.Threshold))}
	f := &gamev1.ProposalForm{Label: label, Worth: w}
	for i, is := range s.Issues {
		only := -1
		if fixed != nil {
			only = fixed[i]
		}
		f.Issues = append(f.Issues, is.proto(only))
		for k := range is.Options {
			if only < 0 || k == only {
				w.OptionPoints[is.OptionID(k)] = int64(p.Points[i][k])
			}
		}
	}
	return f
}
