package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/rvplan"
)

// errNoProtobufFrame: the object has no protobuf form (the stream ends).
var errNoProtobufFrame = errors.New("no protobuf form")

// watchEvent is one document of a watch stream.
type watchEvent struct {
	Type   string `json:"type"`
	Object any    `json:"object"`
}

// appendWatchEvent appends ev as a JSON watch stream writes it: the bytes
// json.Encoder gives it (json.Marshal's and a newline).
func appendWatchEvent(b []byte, ev watchEvent) ([]byte, error) {
	b = append(b, `{"type":`...)
	b, err := registry.AppendJSON(b, ev.Type)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"object":`...)
	if b, err = registry.AppendJSON(b, ev.Object); err != nil {
		return nil, err
	}
	return append(b, '}', '\n'), nil
}

func (h *Handler) watch(w http.ResponseWriter, r *http.Request, ri *requestInfo, f format) error {
	req, sel, err := h.listParams(r, ri, rvplan.Watch)
	if err != nil {
		return err
	}
	plan, serr := rvplan.Make(req)
	if serr != nil {
		return serr
	}
	timeout := h.cfg.MaxWatchTimeout
	if s := query(r).Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", s))
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	if f == formatYAML {
		return errNotAcceptableWatch()
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	flusher, _ := w.(http.Flusher)
	ct := "application/json"
	if f == formatProtobuf {
		ct = protobufType + ";stream=watch"
	}
	start := func() {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(200)
		if flusher != nil {
			flusher.Flush()
		}
	}
	// render gives an event's bytes on the wire; an event of the registry's
	// is rendered once for all the watchers that get it (EncodedEvent).
	form := "watch-json"
	if f == formatProtobuf {
		form = "watch-protobuf"
	}
	render := func(ev watchEvent) ([]byte, error) {
		if f == formatProtobuf {
			frame, ok := protobufWatchFrame(ev.Type, ev.Object)
			if !ok {
				return nil, errNoProtobufFrame
			}
			return frame, nil
		}
		return appendWatchEvent(make([]byte, 0, 512), ev)
	}
	// Events are written as they come and flushed once none is ready
	// (Run's idle), so a burst, the initial events above all, goes out in
	// full frames rather than one frame and one flush per event; a stream
	// that ends is flushed as the handler returns.
	writeFrame := func(b []byte, err error) bool {
		if err != nil {
			return false
		}
		_, err = w.Write(b)
		return err == nil
	}
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	write := func(ev watchEvent) bool { return writeFrame(render(ev)) }
	wt, err := h.reg.Watch(ctx, ri.kind, ri.version, ri.namespace, plan, sel)
	if err != nil {
		if registry.IsExpired(err) {
			// kube-apiserver answers 200 and a single ERROR event carrying the 410.
			start()
			write(watchEvent{Type: registry.Error, Object: statusOf(err)})
			return nil
		}
		return err
	}
	defer wt.Stop()
	start()
	bookmark := func(rev int64, end bool) map[string]any {
		m := map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)}
		if end {
			m["annotations"] = map[string]any{"k8s.io/initial-events-end": "true"}
		}
		return map[string]any{"kind": ri.kind.Kind, "apiVersion": ri.kind.APIVersion(ri.version), "metadata": m}
	}
	if req.AllowWatchBookmarks {
		// Bookmarks are asked for on a timer; they arrive as events.
		tctx, stopTicker := context.WithCancel(ctx)
		defer stopTicker()
		go func() {
			t := time.NewTicker(h.cfg.BookmarkInterval)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					wt.RequestBookmark()
				case <-tctx.Done():
					return
				}
			}
		}()
	}
	lastRev := wt.StartRevision()
	// The events are written from this goroutine as the registry hands them
	// over (Watch.Run), until the watch or the request ends or a write fails.
	sent, headed := true, false
	wt.Run(func(ev registry.WatchEvent) bool {
		if ev.Revision > lastRev {
			lastRev = ev.Revision
		}
		switch {
		case ev.Type == registry.Bookmark:
			if !req.AllowWatchBookmarks && !ev.InitialEventsEnd {
				return true
			}
			sent = write(watchEvent{Type: ev.Type, Object: bookmark(ev.Revision, ev.InitialEventsEnd)})
		case f == formatTable:
			// As kube-apiserver's: only the first table carries the column
			// definitions (the rest have none: null).
			t := objectTable(ri.kind, ev.Object, query(r).Get("includeObject"))
			if headed {
				t.ColumnDefinitions = nil
			}
			headed = true
			sent = write(watchEvent{Type: ev.Type, Object: t})
		default:
			sent = writeFrame(h.reg.EncodedEvent(ev, form, func(ev registry.WatchEvent) ([]byte, error) {
				return render(watchEvent{Type: ev.Type, Object: ev.Object})
			}))
		}
		return sent
	}, flush)
	// A client whose timeoutSeconds ran out is told how far the stream got;
	// the stream then ends and the client resumes from its last resourceVersion.
	if sent && req.AllowWatchBookmarks && ctx.Err() != nil && r.Context().Err() == nil && lastRev > 0 {
		write(watchEvent{Type: registry.Bookmark, Object: bookmark(lastRev, false)})
	}
	return nil
}
