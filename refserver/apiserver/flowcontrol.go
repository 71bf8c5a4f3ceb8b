package apiserver

import (
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/auth"
	"github.com/apiconform/apiconform/refserver/registry"
)

// flowControl is the --max-requests-inflight limit. Short requests and
// watch initialisation draw on separate pools of the same size, so a crowd
// of watches starting up cannot starve short requests, nor the reverse. A
// watch holds its slot until its initial state has been delivered (kube-
// apiserver, too, counts watch initialisation against its limits), then
// runs without one. Only system:masters and health probes are exempt (as
// kube-apiserver's exempt flow schemas have it): on an open server every
// client is anonymous and limited.
type flowControl struct {
	short     chan struct{}
	watchInit chan struct{}
}

func newFlowControl(limit int) *flowControl {
	if limit <= 0 {
		return nil
	}
	return &flowControl{short: make(chan struct{}, limit), watchInit: make(chan struct{}, limit)}
}

// admit takes a slot for the request. It returns the request to serve
// (carrying the watch's initialisation callback) and the release to defer,
// or answers 429 TooManyRequests with Retry-After and returns ok false.
func (fc *flowControl) admit(w http.ResponseWriter, r *http.Request, u auth.User) (_ *http.Request, release func(), ok bool) {
	if fc == nil || u.IsAdmin() || isProbe(r.URL.Path) {
		return r, func() {}, true
	}
	pool := fc.short
	if isWatch(r) {
		pool = fc.watchInit
	}
	select {
	case pool <- struct{}{}:
	default:
		writeStatus(w, r, apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
		return r, nil, false
	}
	var once sync.Once
	release = func() { once.Do(func() { <-pool }) }
	if pool == fc.watchInit {
		r = r.WithContext(registry.WithInitDone(r.Context(), release))
	}
	return r, release, true
}

func isWatch(r *http.Request) bool {
	q := query(r).Get("watch")
	return q == "1" || q == "true"
}

func isProbe(p string) bool {
	for _, probe := range []string{"/healthz", "/livez", "/readyz"} {
		if p == probe || strings.HasPrefix(p, probe+"/") {
			return true
		}
	}
	return false
}
