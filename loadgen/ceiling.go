package loadgen

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Answer is one recorded response: what a Ceiling sends back for a request
// of the same op.
type Answer struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// Recording holds the answers a real server gave during one run, keyed by
// AnswerKey, and one MODIFIED event per watch op. A page of a paged list is
// kept per continue token, so replaying a walk ends where the real one did.
type Recording struct {
	mu      sync.Mutex
	Answers map[string]Answer `json:"answers"`
	Events  map[string][]byte `json:"events"`
	// changes counts the puts; changed is the count at each entry's last
	// put ("a" or "e", then its key), so Since can give what is new.
	changes uint64
	changed map[[2]string]uint64
}

// NewRecording returns an empty recording.
func NewRecording() *Recording {
	return &Recording{Answers: map[string]Answer{}, Events: map[string][]byte{}, changed: map[[2]string]uint64{}}
}

// Since returns the entries put after mark (0: all of them) as a recording
// of their own, and the mark to give next time. A ceiling merges what it
// is sent, so a comparison sends each step's new answers only.
func (r *Recording) Since(mark uint64) (*Recording, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := NewRecording()
	for k, at := range r.changed {
		if at <= mark {
			continue
		}
		if k[0] == "a" {
			out.Answers[k[1]] = r.Answers[k[1]]
		} else {
			out.Events[k[1]] = r.Events[k[1]]
		}
	}
	return out, r.changes
}

// touch notes a put of the entry; r.mu is held.
func (r *Recording) touch(kind, key string) {
	if r.changed == nil {
		r.changed = map[[2]string]uint64{}
	}
	r.changes++
	r.changed[[2]string{kind, key}] = r.changes
}

// AnswerKey is the op, plus the continue token for a page of a list.
func AnswerKey(op, continueToken string) string {
	if continueToken == "" {
		return op
	}
	return op + "?continue=" + continueToken
}

// put keeps the latest answer: for the polls (CRD established, CRD gone)
// that is the one that ended the wait.
func (r *Recording) put(key string, a Answer) {
	r.mu.Lock()
	r.Answers[key] = a
	r.touch("a", key)
	r.mu.Unlock()
}

func (r *Recording) putEvent(op string, raw []byte) {
	r.mu.Lock()
	if _, ok := r.Events[op]; !ok {
		r.Events[op] = append(append([]byte(nil), raw...), '\n')
		r.touch("e", op)
	}
	r.mu.Unlock()
}

// MarshalJSON locks so a recording can be sent while no run writes to it.
func (r *Recording) MarshalJSON() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type plain struct {
		Answers map[string]Answer `json:"answers"`
		Events  map[string][]byte `json:"events"`
	}
	return json.Marshal(plain{r.Answers, r.Events})
}

// CeilingAnswersPath is where a Ceiling takes recorded answers (PUT, JSON):
// they are added to those it has, replacing any of the same key.
const CeilingAnswersPath = "/apiconform-ceiling/answers"

// Ceiling is the transport's upper bound: an HTTPS handler that answers each
// load request with the stored bytes the reference server gave for its op,
// and streams a stored event to the watchers a write names. It does no work
// but the transport's, so a server's figure over the ceiling's is the share
// of what this machine's TLS, HTTP/2 and client allow.
type Ceiling struct {
	token string

	mu       sync.RWMutex
	rec      *Recording
	watchers map[string]map[chan []byte]struct{}
}

// NewCeiling returns a ceiling that accepts only this bearer token.
func NewCeiling(token string) *Ceiling {
	return &Ceiling{token: token, rec: NewRecording(), watchers: map[string]map[chan []byte]struct{}{}}
}

func (c *Ceiling) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(c.token)) == 1
}

func (c *Ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.authorized(r) {
		http.Error(w, "ceiling: unauthorized", http.StatusUnauthorized)
		return
	}
	if r.URL.Path == CeilingAnswersPath && r.Method == http.MethodPut {
		rec := NewRecording()
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<30)).Decode(rec); err != nil {
			http.Error(w, "ceiling: answers: "+err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for k, a := range rec.Answers {
			c.rec.Answers[k] = a
		}
		for op, e := range rec.Events {
			c.rec.Events[op] = e
		}
		c.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// A real server reads the body; so does the ceiling.
	_, _ = io.Copy(io.Discard, r.Body)
	op := r.Header.Get(OpHeader)
	if op == "" {
		http.Error(w, "ceiling: not a load request (no "+OpHeader+" header)", http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	c.mu.RLock()
	a, ok := c.rec.Answers[AnswerKey(op, q.Get("continue"))]
	event := c.rec.Events[op]
	c.mu.RUnlock()
	if !ok {
		http.Error(w, fmt.Sprintf("ceiling: no recorded answer for op %q", op), http.StatusInternalServerError)
		return
	}
	if n := r.Header.Get(NotifyHeader); n != "" {
		if err := c.notify(r.Context(), n); err != nil {
			http.Error(w, "ceiling: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if watch := q.Get("watch"); watch == "1" || watch == "true" {
		c.stream(w, r, op, a, event)
		return
	}
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// stream sends event each time a write names op, until the client leaves.
func (c *Ceiling) stream(w http.ResponseWriter, r *http.Request, op string, a Answer, event []byte) {
	if event == nil {
		http.Error(w, fmt.Sprintf("ceiling: no recorded event for watch op %q", op), http.StatusInternalServerError)
		return
	}
	ch := make(chan []byte, 1024)
	c.mu.Lock()
	if c.watchers[op] == nil {
		c.watchers[op] = map[chan []byte]struct{}{}
	}
	c.watchers[op][ch] = struct{}{}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.watchers[op], ch)
		c.mu.Unlock()
	}()
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			if _, err := w.Write(ev); err != nil {
				return
			}
			// Flush once what is queued is written, as a server that
			// batches its writes would.
			if len(ch) == 0 && flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// notify queues the op's event for each of its watchers, waiting for room.
func (c *Ceiling) notify(ctx context.Context, op string) error {
	c.mu.RLock()
	event := c.rec.Events[op]
	chans := make([]chan []byte, 0, len(c.watchers[op]))
	for ch := range c.watchers[op] {
		chans = append(chans, ch)
	}
	c.mu.RUnlock()
	if event == nil {
		return fmt.Errorf("no recorded event for watch op %q", op)
	}
	for _, ch := range chans {
		select {
		case ch <- event:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// CeilingServer is a Ceiling listening with TLS and HTTP/2 the way the
// reference server does.
type CeilingServer struct {
	srv   *http.Server
	url   string
	caPEM []byte
}

// StartCeiling serves a ceiling on addr (a loopback address) with a fresh
// self-signed certificate until ctx ends or Close.
func StartCeiling(ctx context.Context, addr, token string) (*CeilingServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("ceiling: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("ceiling: address %q is not a loopback address", addr)
	}
	if token == "" {
		return nil, errors.New("ceiling: no token")
	}
	pair, caPEM, err := selfSigned()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ceiling: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: NewCeiling(token), ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}}
	go func() { _ = srv.Serve(tls.NewListener(ln, srv.TLSConfig)) }()
	s := &CeilingServer{srv: srv, url: "https://" + ln.Addr().String(), caPEM: caPEM}
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return s, nil
}

// URL is the ceiling's base URL.
func (s *CeilingServer) URL() string { return s.url }

// CAPEM is the certificate clients trust.
func (s *CeilingServer) CAPEM() []byte { return s.caPEM }

// Close stops serving.
func (s *CeilingServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// Kubeconfig renders a kubeconfig with the ceiling's address, CA and token.
func (s *CeilingServer) Kubeconfig(token string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: ceiling
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: load
  user:
    token: %s
contexts:
- name: ceiling
  context: {cluster: ceiling, user: load}
current-context: ceiling
`, s.url, base64.StdEncoding.EncodeToString(s.caPEM), token)
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1 and
// localhost: the same kind the reference server serves with, so both
// handshakes cost the same.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("ceiling: key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "apiconform-ceiling"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("ceiling: certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return pair, certPEM, nil
}
