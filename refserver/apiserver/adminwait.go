package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// maxRevisionWait bounds what the admin hook accepts.
const maxRevisionWait = time.Minute

// serveRevisionWait sets how long reads wait for a future resourceVersion
// before answering 504 ({"revisionWait":"200ms"}), so a harness need not sit
// through kube-apiserver's 3s for every such spec.
func (h *Handler) serveRevisionWait(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeStatus(w, r, errMethodNotAllowed())
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeStatus(w, r, err)
		return
	}
	var req struct {
		RevisionWait string `json:"revisionWait"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeStatus(w, r, apierrors.NewBadRequest(fmt.Sprintf("revision-wait: %v", err)))
		return
	}
	d, err := time.ParseDuration(req.RevisionWait)
	if err != nil || d <= 0 || d > maxRevisionWait {
		writeStatus(w, r, apierrors.NewBadRequest(fmt.Sprintf("revision-wait: revisionWait %q is not a duration in (0, %s]", req.RevisionWait, maxRevisionWait)))
		return
	}
	h.reg.SetRevisionWait(d)
	writeObject(w, r, 200, map[string]any{"revisionWait": d.String()})
}
