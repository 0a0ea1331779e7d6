package roles

import (
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// stopGrace bounds a graceful stop of a role's gRPC server: calls still running past it are cut.
const stopGrace = 5 * time.Second

// gRPCServer is a role's gRPC server: its services, health and reflection, served on a
// listener. Every role serves and stops it the same way.
type gRPCServer struct {
	*grpc.Server
	health *health.Server
	names  []string
	served chan error
}

// newGRPCServer registers what register adds, health reporting names as serving, and
// reflection, then serves on lis.
func newGRPCServer(lis net.Listener, register func(*gRPCServer), names ...string) *gRPCServer {
	s := &gRPCServer{Server: grpc.NewServer(), names: names, served: make(chan error, 1)}
	register(s)
	s.health = serveHealth(s.Server, names...)
	go func() { s.served <- s.Serve(lis) }()
	return s
}

// Stop stops the server gracefully, for stopGrace at most.
func (s *gRPCServer) Stop() {
	stopped := make(chan struct{})
	go func() { s.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(stopGrace):
		s.Server.Stop()
	}
}

// serveHealth registers the standard health service on srv, reporting the server and its
// services as serving, and reflection.
func serveHealth(srv *grpc.Server, services ...string) *health.Server {
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	for _, name := range services {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	return hs
}
