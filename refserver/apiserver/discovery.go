package apiserver

import (
	"net/http"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiconform/apiconform/refserver/registry"
)

var itemVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
var subVerbs = metav1.Verbs{"get", "patch", "update"}

// groupVersions lists served group → versions (preferred first).
func (h *Handler) groupVersions() (order []string, versions map[string][]string) {
	versions = map[string][]string{}
	for _, k := range h.reg.Kinds() {
		if _, ok := versions[k.Group]; !ok {
			order = append(order, k.Group)
		}
		for _, v := range k.Versions {
			if !slices.Contains(versions[k.Group], v) {
				versions[k.Group] = append(versions[k.Group], v)
			}
		}
	}
	sort.Strings(order)
	return order, versions
}

func (h *Handler) serveDiscoveryRoot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeStatus(w, r, errMethodNotAllowed())
		return
	}
	order, versions := h.groupVersions()
	if r.URL.Path == "/api" || r.URL.Path == "/api/" {
		writeObject(w, r, 200, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		})
		return
	}
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, g := range order {
		if g == "" {
			continue
		}
		list.Groups = append(list.Groups, apiGroup(g, versions[g]))
	}
	writeObject(w, r, 200, list)
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
	found := false
	for _, k := range h.reg.Kinds() {
		if k.Group != g || !k.Serves(v) {
			continue
		}
		found = true
		list.APIResources = append(list.APIResources, resourcesOf(k)...)
	}
	if !found {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	writeObject(w, r, 200, list)
}

func resourcesOf(k *registry.Kind) []metav1.APIResource {
	out := []metav1.APIResource{{
		Name: k.Resource, SingularName: k.Singular, Namespaced: k.Namespaced, Kind: k.Kind,
		Verbs: itemVerbs, ShortNames: k.ShortNames, Categories: k.Categories,
	}}
	if k.StatusSubresource {
		out = append(out, metav1.APIResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.Kind, Verbs: subVerbs})
	}
	if k.Scale != nil {
		out = append(out, metav1.APIResource{Name: k.Resource + "/scale", Namespaced: k.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subVerbs})
	}
	return out
}
