package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/tidwall/gjson"
)

// shards is how many values the "shard" label takes: object i has shard
// i%shards, so a selector on one shard matches a tenth of the collection.
const shards = 10

func (r *runner) itemPath(i int) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/configmaps/cm-%05d", r.ns, i)
}

func (r *runner) collectionPath() string {
	return "/api/v1/namespaces/" + r.ns + "/configmaps"
}

// configMap is the body of create and update: the same labels both times so
// the selector phases see the same shards.
func configMap(i int, payload string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","labels":{"load":"apiconform","shard":"%d"}},"data":{"index":"%d","payload":%q}}`,
		i, i%shards, i, payload)
}

const payload = "0123456789abcdef0123456789abcdef"

func (r *runner) creates(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "create", method: http.MethodPost, path: r.collectionPath(),
			body: configMap(i, payload), want: []int{http.StatusCreated}})
		return err
	})
}

func (r *runner) gets(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "get", method: http.MethodGet, path: r.itemPath(i)})
		return err
	})
}

// updates replace each object without a resourceVersion (an unconditional
// update, which configmaps allow).
func (r *runner) updates(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "update", method: http.MethodPut, path: r.itemPath(i),
			body: configMap(i, "updated-"+payload)})
		return err
	})
}

func (r *runner) mergePatches(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "merge-patch", method: http.MethodPatch, path: r.itemPath(i),
			contentType: "application/merge-patch+json", body: fmt.Appendf(nil, `{"data":{"patched":"%d"}}`, i)})
		return err
	})
}

// applies adds a field of its own under a field manager of its own, so no
// apply conflicts with the earlier writers.
func (r *runner) applies(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d"},"data":{"applied":"%d"}}`, i, i)
		_, _, err := r.do(ctx, req{op: "apply", method: http.MethodPatch, path: r.itemPath(i) + "?fieldManager=apiconform-load",
			contentType: "application/apply-patch+yaml", body: body})
		return err
	})
}

func (r *runner) deletes(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "delete", method: http.MethodDelete, path: r.itemPath(i)})
		return err
	})
}

// pagedLists makes the part's walks of the whole collection (ListRounds in
// all) at PageSize; each page is one measured operation, and every walk
// must see every object.
func (r *runner) pagedLists(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	var lat []time.Duration
	start := time.Now()
	for round := part.lo; round < part.hi; round++ {
		seen, token := 0, ""
		for pages := 0; ; pages++ {
			if pages > r.plan.Objects/r.plan.PageSize+1 {
				return nil, 0, fmt.Errorf("paged walk did not end after %d pages", pages)
			}
			q := url.Values{"limit": {fmt.Sprint(r.plan.PageSize)}}
			if token != "" {
				q.Set("continue", token)
			}
			t0 := time.Now()
			data, _, err := r.do(ctx, req{op: "list-page", method: http.MethodGet, path: r.collectionPath() + "?" + q.Encode()})
			if err != nil {
				return nil, 0, err
			}
			lat = append(lat, time.Since(t0))
			n, next, err := countItems(data)
			if err != nil {
				return nil, 0, err
			}
			seen += n
			if next == "" {
				break
			}
			token = next
		}
		if seen != r.plan.Objects {
			return nil, 0, fmt.Errorf("paged walk saw %d objects, want %d", seen, r.plan.Objects)
		}
	}
	return lat, time.Since(start), nil
}

// countItems reads a list's item count and continue token without decoding
// the items, so the client spends little of the shared CPU on them.
func countItems(data []byte) (int, string, error) {
	if !gjson.ValidBytes(data) {
		return 0, "", fmt.Errorf("list: not JSON: %s", trim(data))
	}
	items := gjson.GetBytes(data, "items")
	if !items.IsArray() && items.Exists() {
		return 0, "", fmt.Errorf("list: items is not an array")
	}
	return int(gjson.GetBytes(data, "items.#").Int()), gjson.GetBytes(data, "metadata.continue").String(), nil
}

// selectorLists lists one shard by label, unpaged: the part's share of
// SelectorLists.
func (r *runner) selectorLists(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	const shard = 3
	want := 0
	for i := 0; i < r.plan.Objects; i++ {
		if i%shards == shard {
			want++
		}
	}
	path := r.collectionPath() + "?" + url.Values{"labelSelector": {fmt.Sprintf("shard=%d", shard)}}.Encode()
	lat := make([]time.Duration, 0, part.hi-part.lo)
	start := time.Now()
	for n := part.lo; n < part.hi; n++ {
		t0 := time.Now()
		data, _, err := r.do(ctx, req{op: "list-selector", method: http.MethodGet, path: path})
		if err != nil {
			return nil, 0, err
		}
		lat = append(lat, time.Since(t0))
		got, _, err := countItems(data)
		if err != nil {
			return nil, 0, err
		}
		if got != want {
			return nil, 0, fmt.Errorf("labelSelector shard=%d listed %d objects, want %d", shard, got, want)
		}
	}
	return lat, time.Since(start), nil
}

// The custom resource: one CRD per run with a group of its own, so a run
// never waits for an earlier run's CRD to finish deleting.
func (r *runner) crdName() string  { return "loads." + r.crdGroup() }
func (r *runner) crdGroup() string { return "l" + r.suffix + ".load.apiconform.io" }
func (r *runner) crdPath() string {
	return "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + r.crdName()
}
func (r *runner) crCollection() string {
	return "/apis/" + r.crdGroup() + "/v1/namespaces/" + r.ns + "/loads"
}

func (r *runner) createCRD(ctx context.Context) ([]time.Duration, time.Duration, error) {
	crd := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":%q},`+
		`"spec":{"group":%q,"scope":"Namespaced","names":{"plural":"loads","singular":"load","kind":"Load","listKind":"LoadList"},`+
		`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",`+
		`"properties":{"index":{"type":"integer"},"payload":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}}}]}}`,
		r.crdName(), r.crdGroup())
	if _, _, err := r.do(ctx, req{op: "crd-create", method: http.MethodPost, path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		body: []byte(crd), want: []int{http.StatusCreated}}); err != nil {
		return nil, 0, err
	}
	r.crdLeft = true
	// Established first, then the collection answers: kube-apiserver may
	// take a moment to serve a new group.
	if err := poll(ctx, func() (bool, error) {
		data, _, err := r.do(ctx, req{op: "crd-get", method: http.MethodGet, path: r.crdPath()})
		if err != nil {
			return false, err
		}
		return gjson.GetBytes(data, `status.conditions.#(type=="Established").status`).String() == "True", nil
	}); err != nil {
		return nil, 0, fmt.Errorf("CRD %s not Established: %w", r.crdName(), err)
	}
	if err := poll(ctx, func() (bool, error) {
		_, code, err := r.do(ctx, req{op: "cr-probe", method: http.MethodGet, path: r.crCollection() + "?limit=1",
			want: []int{http.StatusOK, http.StatusNotFound, http.StatusServiceUnavailable}})
		return code == http.StatusOK, err
	}); err != nil {
		return nil, 0, fmt.Errorf("custom resources of %s not served: %w", r.crdName(), err)
	}
	return nil, 0, nil
}

// deleteCRD deletes the CRD and waits until it is gone, so its cleanup does
// not take CPU from the next target's measurements.
func (r *runner) deleteCRD(ctx context.Context) ([]time.Duration, time.Duration, error) {
	if _, _, err := r.do(ctx, req{op: "crd-delete", method: http.MethodDelete, path: r.crdPath(),
		want: []int{http.StatusOK, http.StatusAccepted}}); err != nil {
		return nil, 0, err
	}
	r.crdLeft = false
	err := poll(ctx, func() (bool, error) {
		_, code, err := r.do(ctx, req{op: "crd-gone", method: http.MethodGet, path: r.crdPath(),
			want: []int{http.StatusOK, http.StatusNotFound}})
		return code == http.StatusNotFound, err
	})
	return nil, 0, err
}

// poll calls cond every 50ms until it is true, fails, or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (r *runner) crCreates(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		body := fmt.Appendf(nil, `{"apiVersion":%q,"kind":"Load","metadata":{"name":"load-%05d","labels":{"shard":"%d"}},"spec":{"index":%d,"payload":%q}}`,
			r.crdGroup()+"/v1", i, i%shards, i, payload)
		_, _, err := r.do(ctx, req{op: "cr-create", method: http.MethodPost, path: r.crCollection(), body: body, want: []int{http.StatusCreated}})
		return err
	})
}

func (r *runner) crGets(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, part, func(ctx context.Context, i int) error {
		_, _, err := r.do(ctx, req{op: "cr-get", method: http.MethodGet, path: fmt.Sprintf("%s/load-%05d", r.crCollection(), i)})
		return err
	})
}
