package policy

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// Metadata keys that carry the caller from the gateway to the referee's and tournaments' gRPC
// APIs.
const (
	roleKey   = "parley-caller-role"
	teamKey   = "parley-caller-team"
	clientKey = "parley-caller-client"
)

// Outgoing returns ctx whose outgoing gRPC calls say that c is asking.
func Outgoing(ctx context.Context, c Caller) context.Context {
	return metadata.AppendToOutgoingContext(ctx, roleKey, c.Role.String(), teamKey, c.Team, clientKey, c.Client)
}

// FromIncoming returns who asks a gRPC call: as the gateway said, or, when nobody said, the
// organiser (the caller reached the referee's own port).
func FromIncoming(ctx context.Context) Caller {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok || len(md.Get(roleKey)) == 0 {
		return Caller{Role: Organiser, Client: "direct"}
	}
	c := Caller{Role: Spectator}
	switch md.Get(roleKey)[0] {
	case "team":
		c.Role = Team
	case "organiser":
		c.Role = Organiser
	}
	if v := md.Get(teamKey); len(v) > 0 {
		c.Team = v[0]
	}
	if v := md.Get(clientKey); len(v) > 0 {
		c.Client = v[0]
	}
	return c
}
