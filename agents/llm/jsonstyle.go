package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// jsonStyle reads replies that are one JSON object:
//
//	{
//	  "reasoning": "private thinking",
//	  "messages": [{"to": ["P2"], "text": "...", "terms": null}],
//	  "move": {"kind": "propose", "terms": {"P1 gives Dollars": 40}, "option": null},
//	  "plan": "a private note for the next turn, or null"
//	}
//
// Terms are an object from "SEAT SIDE RESOURCE" to a whole amount; nested objects
// ({"P1": {"gives": {"Dollars": 40}}}), lists of shares with a "seat" field and written terms
// (a string) are read too. "to" may be a list or one name; an empty list is everyone. Text
// around the object and code fences are ignored. When the server supports it, the request
// carries the JSON schema of this object built for the observation (legal kinds, options,
// recipients and every amount with its range), so a conforming server cannot produce anything
// else.
type jsonStyle struct{}

// structured is how much structured-output support the agent asks of the server.
type structured int

const (
	structuredOff    structured = iota // no response_format
	structuredObject                   // response_format json_object
	structuredSchema                   // response_format json_schema with the move's schema
)

func (s structured) String() string {
	switch s {
	case structuredSchema:
		return "json_schema"
	case structuredObject:
		return "json_object"
	}
	return "off"
}

func (jsonStyle) parse(reply string, t *turn) (*draft, *formatError) {
	obj, ok := findJSONObject(reply)
	if !ok {
		return nil, failf(FailUnparsable, "the answer is not a JSON object; answer with one JSON object as described, and nothing else")
	}
	d := &draft{}
	d.reasoning = jsonText(firstKey(obj, "reasoning", "thoughts", "thinking", "scratchpad"))
	d.plan = jsonText(firstKey(obj, "plan", "notes", "note"))
	if raw := firstKey(obj, "messages"); raw != nil && !isNull(raw) {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, failf(FailUnparsable, `"messages" must be a list of objects with "to" and "text": %v`, err)
		}
		for _, item := range list {
			dm, err := jsonMessage(item)
			if err != nil {
				return nil, err
			}
			d.messages = append(d.messages, dm)
		}
	} else if raw := firstKey(obj, "message"); raw != nil && !isNull(raw) {
		dm, err := jsonMessage(raw)
		if err != nil {
			return nil, err
		}
		d.messages = append(d.messages, dm)
	}
	raw := firstKey(obj, "move", "action", "answer")
	if raw == nil || isNull(raw) {
		if len(d.messages) > 0 && len(t.legal) == 1 && t.isLegal(gamev1.MoveKind_MOVE_KIND_SAY) {
			d.hasMove, d.kind, d.word = true, gamev1.MoveKind_MOVE_KIND_SAY, "say"
		}
		return d, nil
	}
	d.hasMove = true
	var word string
	if err := json.Unmarshal(raw, &word); err == nil {
		// "move": "accept"
		d.word = word
		d.kind, _ = kindOf(word)
		return d, nil
	}
	var mv map[string]json.RawMessage
	if err := json.Unmarshal(raw, &mv); err != nil {
		return nil, failf(FailUnparsable, `"move" must be an object with "kind", "terms" and "option"`)
	}
	d.word = jsonText(firstKey(mv, "kind", "type", "move"))
	d.kind, _ = kindOf(d.word)
	if d.word == "" {
		d.word = string(raw)
	}
	if terms := firstKey(mv, "terms", "proposal", "allocation"); terms != nil && !isNull(terms) {
		text, err := flattenTerms(terms)
		if err != nil {
			return nil, failf(FailBadTerms, "the move's terms cannot be read: %v", err)
		}
		d.terms = text
	}
	d.option = jsonText(firstKey(mv, "option", "choice"))
	return d, nil
}

func jsonMessage(raw json.RawMessage) (draftMessage, *formatError) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return draftMessage{text: text}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return draftMessage{}, failf(FailUnparsable, `each message must be an object with "to" and "text"`)
	}
	dm := draftMessage{text: jsonText(firstKey(m, "text", "message", "content"))}
	if to := firstKey(m, "to", "recipients"); to != nil && !isNull(to) {
		var one string
		if err := json.Unmarshal(to, &one); err == nil {
			dm.to = []string{one}
		} else if err := json.Unmarshal(to, &dm.to); err != nil {
			return draftMessage{}, failf(FailBadMessage, `a message's "to" must be a list of seat names`)
		}
	}
	if terms := firstKey(m, "terms", "proposal"); terms != nil && !isNull(terms) {
		text, err := flattenTerms(terms)
		if err != nil {
			return draftMessage{}, failf(FailBadTerms, "a message's terms cannot be read: %v", err)
		}
		dm.terms, dm.hasTerms = text, true
	}
	return dm, nil
}

// findJSONObject finds the first JSON object in s (after code fences or prose, if any).
func findJSONObject(s string) (map[string]json.RawMessage, bool) {
	for i, tries := 0, 0; i < len(s) && tries < 32; i++ {
		if s[i] != '{' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		dec.UseNumber()
		var obj map[string]json.RawMessage
		if err := dec.Decode(&obj); err == nil {
			return obj, true
		}
	}
	return nil, false
}

// firstKey returns the value of the first of keys present (matched case-insensitively).
func firstKey(obj map[string]json.RawMessage, keys ...string) json.RawMessage {
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			return v
		}
	}
	for _, k := range keys {
		for name, v := range obj {
			if strings.EqualFold(name, k) {
				return v
			}
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// jsonText reads a string value; other values are written as JSON.
func jsonText(raw json.RawMessage) string {
	if raw == nil || isNull(raw) {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(raw))
}

// flattenTerms writes JSON terms as written terms ("P1 gives Dollars 40; ..."), which the
// terms parser reads.
func flattenTerms(raw json.RawMessage) (string, error) {
	var parts []string
	if err := flattenInto(raw, "", &parts, 0); err != nil {
		return "", err
	}
	return strings.Join(parts, "; "), nil
}

func flattenInto(raw json.RawMessage, prefix string, parts *[]string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("terms nested too deep")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	switch raw[0] {
	case '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		// Keys in document order, so that "seat" can come first.
		if _, err := dec.Token(); err != nil {
			return err
		}
		type kv struct {
			k string
			v json.RawMessage
		}
		var entries []kv
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			entries = append(entries, kv{k: fmt.Sprint(tok), v: v})
		}
		for _, e := range entries {
			if k := strings.ToLower(e.k); k == "seat" || k == "player" {
				prefix = strings.TrimSpace(prefix + " " + jsonText(e.v))
			}
		}
		for _, e := range entries {
			if k := strings.ToLower(e.k); k == "seat" || k == "player" {
				continue
			}
			if err := flattenInto(e.v, strings.TrimSpace(prefix+" "+e.k), parts, depth+1); err != nil {
				return err
			}
		}
		return nil
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		for _, v := range list {
			if err := flattenInto(v, prefix, parts, depth+1); err != nil {
				return err
			}
		}
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*parts = append(*parts, strings.TrimSpace(prefix+" "+s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("%s is not an amount", raw)
	}
	text := n.String()
	if f, err := strconv.ParseFloat(text, 64); err == nil && f == float64(int64(f)) && strings.ContainsAny(text, ".eE") {
		text = strconv.FormatInt(int64(f), 10) // 40.0 is 40
	}
	*parts = append(*parts, strings.TrimSpace(prefix+" "+text))
	return nil
}

// jsonTermsExample writes the terms object of bounds with placeholders.
func jsonTermsExample(t *turn, bounds []*gamev1.Bound) string {
	parts := make([]string, len(bounds))
	for i, b := range bounds {
		parts[i] = fmt.Sprintf("%q: AMOUNT", t.amountName(b))
		if b.GetMin() == b.GetMax() {
			parts[i] = fmt.Sprintf("%q: %d", t.amountName(b), b.GetMin())
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (jsonStyle) moveExample(t *turn, k gamev1.MoveKind, bounds []*gamev1.Bound) string {
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		if form := t.formOf(bounds, t.forms); form != nil {
			return fmt.Sprintf(`"move": {"kind": "propose", "terms": %s, "option": null}`, jsonDealExample(form))
		}
		return fmt.Sprintf(`"move": {"kind": "propose", "terms": %s, "option": null}`, jsonTermsExample(t, bounds))
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		return `"move": {"kind": "choose", "terms": null, "option": "OPTION"}`
	}
	return fmt.Sprintf(`"move": {"kind": %q, "terms": null, "option": null}`, games.KindWord(k))
}

func (jsonStyle) messageExample(t *turn, to []int32) string {
	names := make([]string, len(to))
	for i, s := range to {
		names[i] = strconv.Quote(t.name(s))
	}
	return fmt.Sprintf(`{"to": [%s], "text": "TEXT", "terms": null}`, strings.Join(names, ", "))
}

func (jsonStyle) termsExample(t *turn, bounds []*gamev1.Bound) string {
	if form := t.formOf(bounds, t.termForms); form != nil {
		return `"terms": ` + jsonDealExample(form)
	}
	return `"terms": ` + jsonTermsExample(t, bounds)
}

func (jsonStyle) responseFormat(t *turn, level structured) *openai.ChatCompletionResponseFormat {
	switch level {
	case structuredSchema:
		b, err := json.Marshal(moveSchema(t))
		if err != nil {
			panic(err) // a schema of plain types always marshals
		}
		return &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: "parley_action", Schema: json.RawMessage(b), Strict: true,
			},
		}
	case structuredObject:
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return nil
}

// jsonSchema is the subset of JSON Schema that strict structured outputs accept.
type jsonSchema struct {
	Type                 schemaType             `json:"type,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Properties           map[string]*jsonSchema `json:"properties,omitempty"`
	Required             []string               `json:"required,omitempty"`
	AdditionalProperties *bool                  `json:"additionalProperties,omitempty"`
	Items                *jsonSchema            `json:"items,omitempty"`
	Enum                 []*string              `json:"enum,omitempty"`
	Minimum              *int64                 `json:"minimum,omitempty"`
	Maximum              *int64                 `json:"maximum,omitempty"`
}

// schemaType is a JSON Schema type: one name, or several (e.g. a nullable string).
type schemaType []string

func (s schemaType) MarshalJSON() ([]byte, error) {
	if len(s) == 1 {
		return json.Marshal(s[0])
	}
	return json.Marshal([]string(s))
}

func object(props map[string]*jsonSchema) *jsonSchema {
	no := false
	req := make([]string, 0, len(props))
	for k := range props {
		req = append(req, k)
	}
	slices.Sort(req)
	return &jsonSchema{Type: schemaType{"object"}, Properties: props, Required: req, AdditionalProperties: &no}
}

func nullable(s *jsonSchema) *jsonSchema {
	s.Type = append(s.Type, "null")
	return s
}

func enumOf(values []string, withNull bool) []*string {
	out := make([]*string, 0, len(values)+1)
	for _, v := range values {
		out = append(out, &v)
	}
	if withNull {
		out = append(out, nil)
	}
	return out
}

func termsSchema(t *turn, bounds []*gamev1.Bound) *jsonSchema {
	props := make(map[string]*jsonSchema, len(bounds))
	for _, b := range bounds {
		lo, hi := b.GetMin(), b.GetMax()
		sch := &jsonSchema{Type: schemaType{"integer"}, Minimum: &lo, Maximum: &hi}
		if b.GetMaxUnknown() {
			sch.Maximum = nil // no limit this seat knows
		}
		props[t.amountName(b)] = sch
	}
	return nullable(object(props))
}

// moveSchema is the JSON schema of a reply to this observation.
func moveSchema(t *turn) *jsonSchema {
	kinds := make([]string, len(t.legal))
	for i, k := range t.legal {
		kinds[i] = games.KindWord(k)
	}
	move := map[string]*jsonSchema{
		"kind":   {Type: schemaType{"string"}, Enum: enumOf(kinds, false)},
		"terms":  {Type: schemaType{"null"}},
		"option": {Type: schemaType{"null"}},
	}
	if form := dealForm(t.forms); form != nil && t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		move["terms"] = dealSchema(form)
	} else if t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) && len(t.bounds) > 0 {
		move["terms"] = termsSchema(t, t.bounds)
	}
	if t.isLegal(gamev1.MoveKind_MOVE_KIND_CHOOSE) && len(t.choices) > 0 {
		ids := make([]string, len(t.choices))
		for i, c := range t.choices {
			ids[i] = c.GetId()
		}
		move["option"] = &jsonSchema{Type: schemaType{"string", "null"}, Enum: enumOf(ids, true)}
	}
	others := make([]string, 0, len(t.names))
	for _, s := range t.others() {
		others = append(others, t.name(s))
	}
	msg := map[string]*jsonSchema{
		"to":   {Type: schemaType{"array"}, Items: &jsonSchema{Type: schemaType{"string"}, Enum: enumOf(others, false)}},
		"text": {Type: schemaType{"string"}},
	}
	if form := dealForm(t.termForms); form != nil {
		msg["terms"] = dealSchema(form)
	} else if len(t.termBnds) > 0 {
		msg["terms"] = termsSchema(t, t.termBnds)
	} else {
		msg["terms"] = &jsonSchema{Type: schemaType{"null"}}
	}
	return object(map[string]*jsonSchema{
		"reasoning": {Type: schemaType{"string"}},
		"messages":  {Type: schemaType{"array"}, Items: object(msg)},
		"move":      object(move),
		"plan":      {Type: schemaType{"string", "null"}},
	})
}
