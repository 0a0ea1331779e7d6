package gateway

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// strictJSON is the JSON codec of the RPC routes. Unlike connect-go's default it refuses fields
// the message does not define: a misspelt parameter ("totl") is the caller's mistake, answered
// 400 with its name, not dropped to play the match with a default (the command line refuses it
// the same way). Protobuf-encoded requests keep proto's rule: unknown fields are kept, for
// clients generated from a newer contract.
type strictJSON struct{ name string }

func (c strictJSON) Name() string { return c.name }

func (c strictJSON) Marshal(m any) ([]byte, error) {
	msg, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto message", m)
	}
	return protojson.MarshalOptions{}.Marshal(msg)
}

func (c strictJSON) Unmarshal(data []byte, m any) error {
	msg, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a proto message", m)
	}
	if len(data) == 0 {
		return errors.New("empty body: send a JSON object, {} at least")
	}
	return protojson.UnmarshalOptions{}.Unmarshal(data, msg)
}
