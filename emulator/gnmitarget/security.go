package gnmitarget

import (
	"context"
	"crypto/subtle"
	"crypto/tls"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Security is what a target asks of its clients, as a switch's gNMI
// server does: TLS with its certificate, and a username and password in
// each call's metadata (the "username" and "password" keys gnmic and
// the gNMI reference client send).
type Security struct {
	// TLS is the server's TLS configuration; nil serves plaintext.
	TLS *tls.Config
	// Username and Password, when Username is set, must come with every
	// call; a call without them or with others fails Unauthenticated.
	Username, Password string
}

// Secure sets what the target asks of clients from its next Serve (or
// Restart) on.
func (t *Target) Secure(s Security) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.security = s
}

// serverOptions are the gRPC options Security asks for; under t.mu.
func (t *Target) serverOptions() []grpc.ServerOption {
	s := t.security
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(newResponseCodec())} // codec.go
	if s.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.TLS)))
	}
	if s.Username != "" {
		opts = append(opts,
			grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				if err := s.authorize(ctx); err != nil {
					return nil, err
				}
				return h(ctx, req)
			}),
			grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				if err := s.authorize(ss.Context()); err != nil {
					return err
				}
				return h(srv, ss)
			}))
	}
	return opts
}

// authorize checks a call's credentials; it never says which one was wrong.
func (s Security) authorize(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	user, pass := first(md.Get("username")), first(md.Get("password"))
	// Both compared in full and in constant time: how long a refusal took
	// tells nothing about either.
	okUser := subtle.ConstantTimeCompare([]byte(user), []byte(s.Username))
	okPass := subtle.ConstantTimeCompare([]byte(pass), []byte(s.Password))
	if okUser&okPass != 1 {
		return status.Error(codes.Unauthenticated, "gnmi: wrong or missing username/password")
	}
	return nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
