// Package rvplan turns the resourceVersion parameters of a get, list or watch
// request into a read plan: which revision to read, whether history is
// needed, where a page starts, or the Status error kube-apiserver answers.
//
// This is the one place where the documented resourceVersion tables live.
package rvplan

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Verb says which table applies.
type Verb string

const (
	Get   Verb = "get"
	List  Verb = "list"
	Watch Verb = "watch"
)

// Mode is how the read is served.
type Mode string

const (
	// Latest: a consistent read at the current revision.
	Latest Mode = "Latest"
	// Any: any revision is acceptable; the server serves its current one.
	Any Mode = "Any"
	// NotOlderThan: wait until the revision is reached (or time out), then read the latest.
	NotOlderThan Mode = "NotOlderThan"
	// Exact: read the collection exactly as it was at Revision (from history).
	Exact Mode = "Exact"
	// Continue: the next page of a paged list, at the token's revision.
	Continue Mode = "Continue"
)

// Request holds the query parameters that decide the plan.
type Request struct {
	Verb                 Verb
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	SendInitialEvents    *bool
	AllowWatchBookmarks  bool
}

// Plan is what the registry should read.
type Plan struct {
	Mode     Mode
	Revision int64 // NotOlderThan/Exact: the requested revision; Continue: the snapshot revision
	// StartKey is where a continued page starts (relative to the collection prefix).
	StartKey string
	Limit    int64
	// InitialEvents (watch): send the current state as ADDED events first.
	InitialEvents bool
	// InitialEventsEndBookmark (watch): end the initial events with an annotated BOOKMARK.
	InitialEventsEndBookmark bool
}

// ContinueToken is the decoded form of the opaque continue parameter. The
// wire shape (base64 of {"v","rv","start"}) is the one kube-apiserver uses,
// so tokens look alike to clients.
type ContinueToken struct {
	APIVersion string `json:"v"`
	Revision   int64  `json:"rv"`
	Start      string `json:"start"`
}

const tokenVersion = "meta.k8s.io/v1"

// InconsistentRevision in a token (any negative revision) means "continue
// at the latest revision" (the token a 410 for an expired continue offers).
const InconsistentRevision = -1

// EncodeContinue makes the token for the page that starts at key start, read at rev.
func EncodeContinue(rev int64, start string) string {
	b, _ := json.Marshal(ContinueToken{APIVersion: tokenVersion, Revision: rev, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Why kube-apiserver refuses a continue token, in its words (the Status is a
// 400 BadRequest "invalid continue token: " + one of these).
const (
	errBadToken       = "continue key is not valid"
	errTokenRevision  = "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
	errTokenEmptyKey  = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
	errTokenVersionOf = "continue key is not valid: server does not recognize this encoded version"
)

// DecodeContinue parses a token, with kube-apiserver's error wording.
func DecodeContinue(s string) (ContinueToken, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s) // unpadded, as kube-apiserver reads it
	if err != nil {
		return ContinueToken{}, fmt.Errorf("%s: %v", errBadToken, err)
	}
	var t ContinueToken
	if err := json.Unmarshal(raw, &t); err != nil {
		return ContinueToken{}, fmt.Errorf("%s: %v", errBadToken, err)
	}
	switch {
	case t.APIVersion != tokenVersion:
		return ContinueToken{}, fmt.Errorf("%s %v", errTokenVersionOf, t.APIVersion)
	case t.Revision == 0: // a negative revision continues at the latest one
		return ContinueToken{}, errors.New(errTokenRevision)
	case t.Start == "":
		return ContinueToken{}, errors.New(errTokenEmptyKey)
	case !cleanKey(t.Start):
		// A key that climbs out of (or re-spells) the collection's prefix.
		return ContinueToken{}, fmt.Errorf("%s: %v", errBadToken, t.Start)
	}
	t.Start = strings.TrimPrefix(t.Start, "/") // the key is relative to the prefix either way
	return t, nil
}

// cleanKey reports whether a start key, taken as a path below the
// collection prefix, is already in its cleanest form.
func cleanKey(key string) bool {
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	return path.Clean(key) == key
}

// ParseResourceVersion parses a non-empty resourceVersion.
func ParseResourceVersion(rv string) (int64, error) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())
	}
	return int64(n), nil
}

// invalidOptions builds the 422 kube-apiserver answers for bad ListOptions
// (details group meta.k8s.io, kind ListOptions, for lists and watches alike).
func invalidOptions(errs field.ErrorList) *apierrors.StatusError {
	se := apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "", errs)
	se.ErrStatus.Details.Group = "meta.k8s.io"
	return se
}

// Make computes the plan for r, or the Status error to answer.
func Make(r Request) (Plan, *apierrors.StatusError) {
	p := Plan{Limit: r.Limit}
	match := metav1.ResourceVersionMatch(r.ResourceVersionMatch)
	var errs field.ErrorList
	fp := field.NewPath("resourceVersionMatch")
	switch match {
	case "", metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan:
	default:
		errs = append(errs, field.NotSupported(fp, r.ResourceVersionMatch, []string{"Exact", "NotOlderThan", ""}))
	}
	if r.Verb == Get {
		// Gets ignore match and paging; only the version counts.
		return planGet(r)
	}
	if r.Verb == Watch {
		return planWatch(r)
	}
	if match != "" {
		if r.ResourceVersion == "" {
			errs = append(errs, field.Forbidden(fp, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if r.Continue != "" {
			errs = append(errs, field.Forbidden(fp, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if match == metav1.ResourceVersionMatchExact && r.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(fp, "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
		}
	}
	if r.SendInitialEvents != nil {
		// Streaming is for watches; kube-apiserver refuses it on a list.
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if len(errs) > 0 {
		return Plan{}, invalidOptions(errs)
	}
	if r.Continue != "" {
		tok, err := DecodeContinue(r.Continue)
		if err != nil {
			return Plan{}, apierrors.NewBadRequest("invalid continue token: " + err.Error())
		}
		if r.ResourceVersion != "" && r.ResourceVersion != "0" {
			return Plan{}, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		p.Mode, p.Revision, p.StartKey = Continue, tok.Revision, tok.Start
		return p, nil
	}
	if r.ResourceVersion == "" {
		p.Mode = Latest
		return p, nil
	}
	rev, err := ParseResourceVersion(r.ResourceVersion)
	if err != nil {
		return Plan{}, apierrors.NewBadRequest("invalid resource version: " + err.Error())
	}
	switch {
	case match == metav1.ResourceVersionMatchExact:
		p.Mode, p.Revision = Exact, rev
	case rev == 0:
		p.Mode = Any
	case match == metav1.ResourceVersionMatchNotOlderThan:
		p.Mode, p.Revision = NotOlderThan, rev
	case r.Limit > 0:
		// Legacy: an unset match with a limit and a non-zero version reads exactly.
		p.Mode, p.Revision = Exact, rev
	default:
		p.Mode, p.Revision = NotOlderThan, rev
	}
	return p, nil
}

func planGet(r Request) (Plan, *apierrors.StatusError) {
	switch r.ResourceVersion {
	case "":
		return Plan{Mode: Latest}, nil
	case "0":
		return Plan{Mode: Any}, nil
	}
	rev, err := ParseResourceVersion(r.ResourceVersion)
	if err != nil {
		// kube-apiserver answers a bare 500 here (no reason); match it.
		return Plan{}, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 500, Message: err.Error(),
		}}
	}
	if rev == 0 {
		return Plan{Mode: Any}, nil
	}
	return Plan{Mode: NotOlderThan, Revision: rev}, nil
}

func planWatch(r Request) (Plan, *apierrors.StatusError) {
	fp := field.NewPath("resourceVersionMatch")
	match := metav1.ResourceVersionMatch(r.ResourceVersionMatch)
	send := r.SendInitialEvents != nil && *r.SendInitialEvents
	// The rules in kube-apiserver's order (the streaming table's Invalid
	// cells record the messages, Exact's with two causes).
	var errs field.ErrorList
	if r.SendInitialEvents != nil && match != metav1.ResourceVersionMatchNotOlderThan {
		errs = append(errs, field.Forbidden(fp, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if match != "" && r.SendInitialEvents == nil {
		errs = append(errs, field.Forbidden(fp, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
	}
	if match != "" && match != metav1.ResourceVersionMatchNotOlderThan {
		errs = append(errs, field.NotSupported(fp, r.ResourceVersionMatch, []string{"NotOlderThan"}))
	}
	if len(errs) > 0 {
		return Plan{}, invalidOptions(errs)
	}
	p := Plan{}
	if r.ResourceVersion != "" {
		rev, err := ParseResourceVersion(r.ResourceVersion)
		if err != nil {
			return Plan{}, apierrors.NewBadRequest("invalid resource version: " + err.Error())
		}
		p.Revision = rev
	}
	switch {
	case send:
		p.Mode = NotOlderThan
		p.InitialEvents = true
		p.InitialEventsEndBookmark = r.AllowWatchBookmarks
		switch {
		case r.ResourceVersion == "":
			p.Mode = Latest // a consistent read of the state
		case p.Revision == 0:
			p.Mode = Any
		}
	case r.SendInitialEvents != nil && p.Revision == 0:
		// sendInitialEvents=false: no initial state, changes from now on
		// (from any start for "0").
		p.Mode = Latest
		if r.ResourceVersion == "0" {
			p.Mode = Any
		}
	case r.SendInitialEvents != nil:
		// sendInitialEvents=false at a revision: the changes after it, as
		// kube-apiserver v1.36 answers (observed: every change after N).
		p.Mode = Exact
	case p.Revision == 0:
		// unset or "0": synthetic ADDED events for the current state, then
		// changes; kube-apiserver v1.36 marks the end of that state with the
		// initial-events-end BOOKMARK when bookmarks were asked for.
		p.Mode, p.InitialEvents = Latest, true
		p.InitialEventsEndBookmark = r.AllowWatchBookmarks
		if r.ResourceVersion == "0" {
			p.Mode = Any
		}
	default:
		p.Mode = Exact // exactly the changes after Revision
	}
	return p, nil
}

// TooLargeResourceVersion is the 504 answered when a requested revision is
// not reached in time.
func TooLargeResourceVersion(requested, current int64) *apierrors.StatusError {
	se := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	se.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return se
}

// Expired is the 410 for a list at a compacted revision.
func Expired() *apierrors.StatusError {
	return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
}

// WatchTooOld is the Status carried by the ERROR event of a watch from a compacted revision.
func WatchTooOld(requested, compacted int64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, compacted))
}
