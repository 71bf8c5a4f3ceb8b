// Package refserver is the apiconform reference server: a small server that
// speaks the Kubernetes API machinery as documented. It wires the MVCC store
// (refserver/storage), the generic registry (refserver/registry) and the HTTP
// layer (refserver/apiserver), and can run embedded in tests and the harness.
package refserver

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apiconform/apiconform/refserver/apiserver"
	"github.com/apiconform/apiconform/refserver/auth"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/storage"
)

// ListeningPrefix starts the line a command running a Server prints once it
// serves (`apiconform serve`, apiconform-refserver), followed by its URL;
// the processes that start one read the URL from it.
const ListeningPrefix = "apiconform reference server listening on "

// Config configures a Server; at least one of Addr and InsecureAddr must be set.
type Config struct {
	// Addr is the HTTPS listen address (e.g. 127.0.0.1:6443); "" = no HTTPS listener.
	Addr string
	// InsecureAddr is the plain HTTP listen address; "" = none.
	InsecureAddr string
	// AllowNonLoopback permits listening on addresses other than loopback.
	AllowNonLoopback bool
	// DataDir selects the bbolt backend in DIR/refserver.db; "" = memory.
	DataDir string
	// FreshStore starts an empty store when DIR/refserver.db is an empty
	// (0-byte) file, which is otherwise refused as lost data.
	FreshStore bool
	// HistoryWindow and HistoryMaxRevisions bound readable history (see storage.Options).
	HistoryWindow       time.Duration
	HistoryMaxRevisions int
	// Tokens authenticates requests (nil = open server). AdminToken, when set,
	// is added as a system:masters user.
	Tokens     auth.Tokens
	AdminToken string
	// Rules authorizes requests (nil = every authenticated user may do anything).
	Rules *auth.Rules
	// EnableAdminEndpoints serves /apiconform/admin.
	EnableAdminEndpoints bool
	// BookmarkInterval for watches with allowWatchBookmarks (0 = 1 minute).
	BookmarkInterval time.Duration
	// RevisionWait bounds waiting for a future resourceVersion (0 = 3s).
	RevisionWait time.Duration
	// EventTTL is how long an event is kept after its last write, as
	// kube-apiserver's --event-ttl (0 = until deleted; StartEmbedded and
	// the serve command default to kube-apiserver's hour).
	EventTTL time.Duration
	// MaxRequestsInFlight bounds concurrent short requests, and separately
	// watch initialisations, of every client but system:masters and health
	// probes; past it they get 429 with Retry-After (0 = no bound).
	MaxRequestsInFlight int
	// WatchBuffer is the per-watcher event buffer (0 = store default).
	WatchBuffer int
	// Faults switches on simulated deviations (faultcheck, --simulate-deviation).
	Faults faults.Set
	// Logf logs (nil = log.Printf).
	Logf func(format string, args ...any)
	// Clock injects time for the store's history window (nil = time.Now).
	Clock func() time.Time
}

// Server is a running (or ready to run) reference server.
type Server struct {
	cfg     Config
	store   storage.Store
	begin   func() // starts the store's background work: once the server serves
	reg     *registry.Registry
	handler http.Handler
	tlsCert *certBundle

	mu        sync.Mutex
	listeners []net.Listener
	servers   []*http.Server
	url       string
	insecure  string
	closed    bool
}

// New validates cfg and opens the store; Start begins serving.
func New(cfg Config) (*Server, error) {
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	if cfg.Addr == "" && cfg.InsecureAddr == "" {
		return nil, errors.New("refserver: no listen address (set Addr or InsecureAddr)")
	}
	for _, a := range []string{cfg.Addr, cfg.InsecureAddr} {
		if a == "" || cfg.AllowNonLoopback {
			continue
		}
		if err := checkLoopback(a); err != nil {
			return nil, err
		}
	}
	if cfg.AdminToken != "" {
		if cfg.Tokens == nil {
			cfg.Tokens = auth.Tokens{}
		}
		cfg.Tokens[cfg.AdminToken] = auth.User{Name: "admin", UID: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	}
	opts := storage.Options{HistoryWindow: cfg.HistoryWindow, HistoryMaxRevisions: cfg.HistoryMaxRevisions, WatchBuffer: cfg.WatchBuffer, Clock: cfg.Clock,
		AllowEmptyFile: cfg.FreshStore, Logf: cfg.Logf}
	var st storage.Store
	begin := func() {}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("refserver: data dir: %w", err)
		}
		bs, b, err := openBolt(cfg.DataDir, opts)
		if err != nil {
			return nil, fmt.Errorf("refserver: open store: %w", err)
		}
		st, begin = bs, b
	} else {
		st = storage.NewMemory(opts)
	}
	reg := registry.New(registry.Config{Store: st, RevisionWait: cfg.RevisionWait, EventTTL: cfg.EventTTL, Faults: cfg.Faults})
	reg.Register(registry.BuiltinKinds(reg)...)
	if err := reg.Start(context.Background()); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("refserver: load CRDs: %w", err)
	}
	h := apiserver.New(apiserver.Config{Registry: reg, Tokens: cfg.Tokens, Rules: cfg.Rules, AdminEndpoints: cfg.EnableAdminEndpoints,
		BookmarkInterval: cfg.BookmarkInterval, MaxRequestsInFlight: cfg.MaxRequestsInFlight, Faults: cfg.Faults, Logf: cfg.Logf})
	// Simulated deviations sit at the HTTP seam in front of the handler.
	s := &Server{cfg: cfg, store: st, begin: begin, reg: reg, handler: cfg.Faults.Wrap(h)}
	if names := cfg.Faults.Names(); len(names) > 0 {
		cfg.Logf("WARNING: simulating deviations from the documents: %s (this server is deliberately NOT conformant)", strings.Join(names, ", "))
	}
	if cfg.Tokens == nil {
		cfg.Logf("WARNING: no token file given: the server is open to every client on its address (anyone may read and write everything)")
	}
	return s, nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("refserver: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refserver: address %q is not a loopback address; pass --allow-non-loopback to serve on it", addr)
	}
	return nil
}

// Handler is the HTTP handler (for in-process tests with httptest). The
// store's background work begins, as when Start serves.
func (s *Server) Handler() http.Handler {
	s.begin()
	return s.handler
}

// Registry exposes the registry (tests).
func (s *Server) Registry() *registry.Registry { return s.reg }

// Start listens and serves in the background until ctx ends or Close.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("refserver: closed")
	}
	if s.cfg.Addr != "" {
		cert, err := newSelfSigned()
		if err != nil {
			return err
		}
		s.tlsCert = cert
		ln, err := net.Listen("tcp", s.cfg.Addr)
		if err != nil {
			return fmt.Errorf("refserver: listen %s: %w", s.cfg.Addr, err)
		}
		srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 30 * time.Second,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}}
		tln := tls.NewListener(ln, srv.TLSConfig)
		s.listeners = append(s.listeners, ln)
		s.servers = append(s.servers, srv)
		s.url = "https://" + hostPort(ln.Addr())
		go func() { _ = srv.Serve(tln) }()
	}
	if s.cfg.InsecureAddr != "" {
		ln, err := net.Listen("tcp", s.cfg.InsecureAddr)
		if err != nil {
			s.closeLocked()
			return fmt.Errorf("refserver: listen %s: %w", s.cfg.InsecureAddr, err)
		}
		srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 30 * time.Second}
		s.listeners = append(s.listeners, ln)
		s.servers = append(s.servers, srv)
		s.insecure = "http://" + hostPort(ln.Addr())
		if s.url == "" {
			s.url = s.insecure
		}
		go func() { _ = srv.Serve(ln) }()
	}
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	// The rest of the data file's check and garbage collection waited
	// until the listeners were up, not to compete with the start-up for
	// the CPU.
	s.begin()
	return nil
}

func hostPort(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	return net.JoinHostPort(ta.IP.String(), fmt.Sprint(ta.Port))
}

// URL is the base URL clients use (HTTPS when served, else HTTP).
func (s *Server) URL() string { s.mu.Lock(); defer s.mu.Unlock(); return s.url }

// InsecureURL is the plain HTTP URL ("" when not served).
func (s *Server) InsecureURL() string { s.mu.Lock(); defer s.mu.Unlock(); return s.insecure }

// Token is the admin bearer token ("" for an open server).
func (s *Server) Token() string { return s.cfg.AdminToken }

// CAData is the PEM certificate clients trust (nil without HTTPS).
func (s *Server) CAData() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tlsCert == nil {
		return nil
	}
	return s.tlsCert.certPEM
}

// Close stops serving and closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closeLocked()
	s.closed = true
	s.reg.Close()
	return s.store.Close()
}

func (s *Server) closeLocked() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
	s.servers, s.listeners = nil, nil
}

// NewToken makes a random bearer token.
func NewToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartEmbedded starts a server for tests and `apiconform run` without a
// target: plain HTTP on 127.0.0.1:0, admin endpoints on, an admin token,
// one-second bookmarks, a short revision wait and kube-apiserver's hour of
// event TTL.
func StartEmbedded(ctx context.Context, mutate ...func(*Config)) (*Server, error) {
	cfg := Config{InsecureAddr: "127.0.0.1:0", AdminToken: NewToken(), EnableAdminEndpoints: true,
		BookmarkInterval: time.Second, EventTTL: time.Hour, Logf: func(string, ...any) {}}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Kubeconfig renders a kubeconfig for clients of this server.
func (s *Server) Kubeconfig() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: apiconform\n  cluster:\n    server: %s\n", s.URL())
	if ca := s.CAData(); ca != nil && strings.HasPrefix(s.URL(), "https://") {
		fmt.Fprintf(&b, "    certificate-authority-data: %s\n", b64(ca))
	}
	b.WriteString("users:\n- name: apiconform\n  user:\n")
	if s.Token() != "" {
		fmt.Fprintf(&b, "    token: %s\n", s.Token())
	} else {
		// An open server ignores tokens; a placeholder keeps kubectl from prompting.
		b.WriteString("    token: open-server\n")
	}
	b.WriteString("contexts:\n- name: apiconform\n  context:\n    cluster: apiconform\n    user: apiconform\ncurrent-context: apiconform\n")
	return []byte(b.String())
}
