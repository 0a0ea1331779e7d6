package llm

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Deals (Proposal.deal) are written as the options chosen, one per issue, by their ids:
//
//	A2, B3, C1, D2, E4
//
// in any order and case, separated by commas, spaces or semicolons; "A: 2" or "A=A2" and
// {"A": "A2"} (JSON, flattened to "A A2") are read too. Option labels alone are not read: the
// ids are short and unambiguous. An issue whose form offers a single option may be left out.

// dealForm returns the first of forms that describes a deal (lists issues), or nil.
func dealForm(forms []*gamev1.ProposalForm) *gamev1.ProposalForm {
	for _, f := range forms {
		if len(f.GetIssues()) > 0 {
			return f
		}
	}
	return nil
}

var (
	optionTokRe = regexp.MustCompile(`(?i)\b([A-Z]{1,2})\s*(?:[:=]\s*)?(\d{1,2})\b`)
	issueOptRe  = regexp.MustCompile(`(?i)\b([A-Z]{1,2})\s+(?:[:=]\s*)?([A-Z]{1,2}\d{1,2})\b`)
)

// parseDeal reads a written deal against form.
func (t *turn) parseDeal(text string, form *gamev1.ProposalForm) (*gamev1.Deal, error) {
	issues := form.GetIssues()
	chosen := make([]string, len(issues))
	find := func(id string) (int, int) {
		for i, is := range issues {
			for k, o := range is.GetOptions() {
				if strings.EqualFold(o.GetId(), id) {
					return i, k
				}
			}
		}
		return -1, -1
	}
	set := func(i, k int, as string) error {
		id := issues[i].GetOptions()[k].GetId()
		if chosen[i] != "" && chosen[i] != id {
			return fmt.Errorf("issue %s is given two options (%s and %s); choose one", issues[i].GetId(), chosen[i], id)
		}
		chosen[i] = id
		return nil
	}
	// "A A2" (flattened JSON) first: the issue's name then an option id.
	rest := issueOptRe.ReplaceAllStringFunc(text, func(m string) string {
		sub := issueOptRe.FindStringSubmatch(m)
		if i, _ := find(sub[2]); i >= 0 && strings.EqualFold(issues[i].GetId(), sub[1]) {
			return " " + sub[2] + " "
		}
		return m
	})
	var unknown []string
	for _, m := range optionTokRe.FindAllStringSubmatch(rest, -1) {
		id := strings.ToUpper(m[1]) + m[2]
		i, k := find(id)
		if i < 0 {
			if slices.ContainsFunc(issues, func(is *gamev1.Issue) bool { return strings.EqualFold(is.GetId(), m[1]) }) {
				unknown = append(unknown, id)
			}
			continue
		}
		if err := set(i, k, m[0]); err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s is no option; %s", strings.Join(unknown, ", "), t.dealRule(form))
	}
	d := &gamev1.Deal{}
	var missing []string
	for i, is := range issues {
		if chosen[i] == "" && len(is.GetOptions()) == 1 {
			chosen[i] = is.GetOptions()[0].GetId() // fixed by the rules
		}
		if chosen[i] == "" {
			missing = append(missing, is.GetId())
			continue
		}
		d.Choices = append(d.Choices, &gamev1.IssueChoice{Issue: is.GetId(), Option: chosen[i]})
	}
	if len(missing) == len(issues) {
		return nil, fmt.Errorf("no options found in %q; %s", clip(strings.TrimSpace(text), 200), t.dealRule(form))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no option chosen on issue %s; %s", strings.Join(missing, ", "), t.dealRule(form))
	}
	return d, nil
}

// dealRule says what a deal of form must name.
func (t *turn) dealRule(form *gamev1.ProposalForm) string {
	parts := make([]string, len(form.GetIssues()))
	for i, is := range form.GetIssues() {
		opts := is.GetOptions()
		switch len(opts) {
		case 0:
			parts[i] = is.GetId() + " (no option)"
		case 1:
			parts[i] = opts[0].GetId()
		default:
			parts[i] = opts[0].GetId() + " to " + opts[len(opts)-1].GetId()
		}
	}
	return "a deal names exactly one option of each issue: " + strings.Join(parts, ", ")
}

// dealPlaceholder writes a deal of form with a placeholder per issue, e.g. "A1-A3, B1-B3"; an
// issue with one option shows that option.
func dealPlaceholder(form *gamev1.ProposalForm) string {
	parts := make([]string, len(form.GetIssues()))
	for i, is := range form.GetIssues() {
		opts := is.GetOptions()
		switch len(opts) {
		case 0:
			parts[i] = is.GetId() + "?"
		case 1:
			parts[i] = opts[0].GetId()
		default:
			parts[i] = "ONE OF " + opts[0].GetId() + "-" + opts[len(opts)-1].GetId()
		}
	}
	return strings.Join(parts, ", ")
}

// dealRanges describes the issues and options of form in words, for prompts.
func dealRanges(form *gamev1.ProposalForm) string {
	parts := make([]string, len(form.GetIssues()))
	for i, is := range form.GetIssues() {
		opts := make([]string, len(is.GetOptions()))
		for k, o := range is.GetOptions() {
			opts[k] = o.GetId()
			if o.GetLabel() != "" {
				opts[k] += " " + o.GetLabel()
			}
		}
		label := is.GetId()
		if is.GetLabel() != "" {
			label += " (" + is.GetLabel() + ")"
		}
		parts[i] = label + ": " + strings.Join(opts, ", ")
	}
	return "exactly one option of each issue; " + strings.Join(parts, "; ")
}

// dealText writes a deal as its option ids, "A2, B3".
func dealText(d *gamev1.Deal) string {
	parts := make([]string, len(d.GetChoices()))
	for i, c := range d.GetChoices() {
		parts[i] = c.GetOption()
	}
	return strings.Join(parts, ", ")
}

// checkDeal checks an old deal against form (to propose it again).
func (t *turn) checkDeal(d *gamev1.Deal, form *gamev1.ProposalForm) (*gamev1.Deal, error) {
	return t.parseDeal(dealText(d), form)
}

// dealSchema is the JSON schema of a deal's terms: one property per issue, its option ids.
func dealSchema(form *gamev1.ProposalForm) *jsonSchema {
	props := make(map[string]*jsonSchema, len(form.GetIssues()))
	for _, is := range form.GetIssues() {
		ids := make([]string, len(is.GetOptions()))
		for k, o := range is.GetOptions() {
			ids[k] = o.GetId()
		}
		props[is.GetId()] = &jsonSchema{Type: schemaType{"string"}, Enum: enumOf(ids, false)}
	}
	return nullable(object(props))
}

// jsonDealExample writes a deal's terms object with placeholders.
func jsonDealExample(form *gamev1.ProposalForm) string {
	parts := make([]string, len(form.GetIssues()))
	for i, is := range form.GetIssues() {
		opts := is.GetOptions()
		v := is.GetId() + "?"
		switch len(opts) {
		case 1:
			v = opts[0].GetId()
		case 0:
		default:
			v = "ONE OF " + opts[0].GetId() + "-" + opts[len(opts)-1].GetId()
		}
		parts[i] = strconv.Quote(is.GetId()) + ": " + strconv.Quote(v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
