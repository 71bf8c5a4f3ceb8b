package apiserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apiconform/apiconform/refserver/registry"
)

var itemVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// customVerbs is the order kube-apiserver's custom resource handler lists
// its verbs in.
var customVerbs = metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
var subVerbs = metav1.Verbs{"get", "patch", "update"}

// builtinGroupOrder is kube-apiserver's order for the built-in groups served
// here; other groups (custom resources, Frobbers) follow, sorted.
var builtinGroupOrder = []string{"events.k8s.io", authnGroup, authzGroup, "rbac.authorization.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io"}

// isCustom reports whether k is served the way kube-apiserver serves custom
// resources (no Go type of kube's own).
func isCustom(k *registry.Kind) bool {
	return !kindHasProtobuf(k.Group, k.StorageVersion(), k.Kind)
}

// groupVersions lists served group → versions (preferred first), the
// review groups included, in discovery order.
func (h *Handler) groupVersions() (order []string, versions map[string][]string) {
	versions = map[string][]string{authnGroup: {"v1"}, authzGroup: {"v1"}}
	for _, k := range h.reg.Kinds() {
		for _, v := range k.Versions {
			if !slices.Contains(versions[k.Group], v) {
				versions[k.Group] = append(versions[k.Group], v)
			}
		}
	}
	for g := range versions {
		if !slices.Contains(builtinGroupOrder, g) {
			order = append(order, g)
		}
	}
	sort.Strings(order)
	var builtin []string
	for _, g := range builtinGroupOrder {
		if _, ok := versions[g]; ok {
			builtin = append(builtin, g)
		}
	}
	return append(builtin, order...), versions
}

// aggregatedType is the media type of an Accept entry asking for
// aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList).
const aggregatedParams = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// discoveryFormat picks legacy or aggregated discovery and the media type
// from Accept in kube-apiserver's order; ok is false for a 406.
func discoveryFormat(r *http.Request) (ct string, aggregated, ok bool) {
	if strings.TrimSpace(r.Header.Get("Accept")) == "" {
		return "application/json", false, true
	}
	for _, a := range accepts(r.Header.Get("Accept")) {
		mt := a.Type + "/" + a.SubType
		switch mt {
		case "*/*", "application/*":
			mt = "application/json"
		case "application/json", "application/yaml", protobufType:
		default:
			continue
		}
		switch {
		case a.Params["as"] == "" && a.Params["g"] == "" && a.Params["v"] == "":
			return mt, false, true
		case a.Params["as"] == "APIGroupDiscoveryList" && a.Params["g"] == "apidiscovery.k8s.io" && a.Params["v"] == "v2":
			return mt, true, true
		}
	}
	return "", false, false
}

func (h *Handler) serveDiscoveryRoot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeStatus(w, r, errMethodNotAllowed())
		return
	}
	ct, aggregated, ok := discoveryFormat(r)
	if !ok {
		writeStatus(w, r, errNotAcceptableCustom())
		return
	}
	core := r.URL.Path == "/api" || r.URL.Path == "/api/"
	if aggregated {
		h.writeAggregated(w, r, ct, h.aggregated(core))
		return
	}
	if core {
		writeObject(w, r, 200, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		})
		return
	}
	order, versions := h.groupVersions()
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, g := range order {
		if g == "" {
			continue
		}
		list.Groups = append(list.Groups, apiGroup(g, versions[g]))
	}
	writeObject(w, r, 200, list)
}

// aggregated builds the APIGroupDiscoveryList of /api (core) or /apis.
func (h *Handler) aggregated(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	out := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items: []apidiscoveryv2.APIGroupDiscovery{}}
	order, versions := h.groupVersions()
	for _, g := range order {
		if (g == "") != core {
			continue
		}
		gd := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range versions[g] {
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent, Resources: []apidiscoveryv2.APIResourceDiscovery{}}
			for _, res := range h.resourcesIn(g, v) {
				vd.Resources = append(vd.Resources, res.aggregated(g, v))
			}
			gd.Versions = append(gd.Versions, vd)
		}
		out.Items = append(out.Items, gd)
	}
	return out
}

// servedResource is one resource of a group-version with its subresources.
type servedResource struct {
	main metav1.APIResource
	subs []metav1.APIResource
	// custom: responseKind carries group and version, as for custom resources.
	custom bool
}

func (s servedResource) aggregated(g, v string) apidiscoveryv2.APIResourceDiscovery {
	kind := func(r metav1.APIResource) *metav1.GroupVersionKind {
		gvk := &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		if s.custom && r.Group == "" {
			gvk.Group, gvk.Version = g, v
		}
		return gvk
	}
	scope := apidiscoveryv2.ScopeCluster
	if s.main.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	out := apidiscoveryv2.APIResourceDiscovery{Resource: s.main.Name, ResponseKind: kind(s.main), Scope: scope,
		SingularResource: s.main.SingularName, Verbs: s.main.Verbs, ShortNames: s.main.ShortNames, Categories: s.main.Categories}
	for _, sub := range s.subs {
		out.Subresources = append(out.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: strings.TrimPrefix(sub.Name, s.main.Name+"/"), ResponseKind: kind(sub), Verbs: sub.Verbs})
	}
	return out
}

// resourcesIn lists the resources served in group g, version v.
func (h *Handler) resourcesIn(g, v string) []servedResource {
	var out []servedResource
	for _, res := range reviewResources[g] {
		if v == "v1" {
			out = append(out, servedResource{main: res})
		}
	}
	for _, k := range h.reg.Kinds() {
		if k.Group != g || !k.Serves(v) {
			continue
		}
		rs := resourcesOf(k)
		out = append(out, servedResource{main: rs[0], subs: rs[1:], custom: isCustom(k)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].main.Name < out[j].main.Name })
	return out
}

// writeAggregated renders aggregated discovery in ct with the parameters
// echoed in Content-Type, an ETag, and 304 for a matching If-None-Match.
func (h *Handler) writeAggregated(w http.ResponseWriter, r *http.Request, ct string, list *apidiscoveryv2.APIGroupDiscoveryList) {
	j, err := json.Marshal(list)
	if err != nil {
		writeStatus(w, r, err)
		return
	}
	if notModified(w, r, j) {
		return
	}
	body := append(j, '\n')
	switch ct {
	case protobufType:
		body, _ = encodeProtobuf(list)
	case "application/yaml":
		body, _ = yaml.JSONToYAML(j)
	default:
		if isPretty(r) {
			var buf bytes.Buffer
			_ = json.Indent(&buf, j, "", "  ")
			body = buf.Bytes()
		}
	}
	w.Header().Set("Content-Type", ct+aggregatedParams)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func apiGroup(g string, versions []string) metav1.APIGroup {
	grp := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g}
	for _, v := range versions {
		grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
	}
	grp.PreferredVersion = grp.Versions[0]
	return grp
}

// serveGroup answers /apis/G.
func (h *Handler) serveGroup(w http.ResponseWriter, r *http.Request, g string) {
	_, versions := h.groupVersions()
	vs, ok := versions[g]
	if !ok || g == "" {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	grp := apiGroup(g, vs)
	writeObject(w, r, 200, &grp)
}

// serveResourceList answers /api/v1 and /apis/G/V.
func (h *Handler) serveResourceList(w http.ResponseWriter, r *http.Request, g, v string) {
	gv := v
	if g != "" {
		gv = g + "/" + v
	}
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv, APIResources: []metav1.APIResource{}}
	res := h.resourcesIn(g, v)
	if len(res) == 0 {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	for _, s := range res {
		list.APIResources = append(list.APIResources, s.main)
		list.APIResources = append(list.APIResources, s.subs...)
	}
	writeObject(w, r, 200, list)
}

// storageVersionHash is the hash kube-apiserver lists for a stored resource
// (storage migrators compare it): the first 8 bytes of the SHA-256 of the
// group/version/kind its objects are stored as, in base64. A kind stored as
// another has that kind's (events.k8s.io/v1 events list core's).
func storageVersionHash(k *registry.Kind) string {
	if k.StoredAs != nil {
		k = k.StoredAs
	}
	version := k.StorageVersion()
	if k.HashedVersion != "" {
		version = k.HashedVersion
	}
	sum := sha256.Sum256([]byte(k.Group + "/" + version + "/" + k.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

func resourcesOf(k *registry.Kind) []metav1.APIResource {
	verbs := itemVerbs
	if isCustom(k) {
		verbs = customVerbs
	}
	out := []metav1.APIResource{{
		Name: k.Resource, SingularName: k.Singular, Namespaced: k.Namespaced, Kind: k.Kind,
		Verbs: verbs, ShortNames: k.ShortNames, Categories: k.Categories, StorageVersionHash: storageVersionHash(k),
	}}
	if k.StatusSubresource {
		out = append(out, metav1.APIResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.Kind, Verbs: subVerbs})
	}
	if k.Scale != nil {
		out = append(out, metav1.APIResource{Name: k.Resource + "/scale", Namespaced: k.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subVerbs})
	}
	return out
}
