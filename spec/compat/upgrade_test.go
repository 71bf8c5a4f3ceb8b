package compat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/openapi"
)

var (
	operationRules  = []string{OperationRemoved, ParameterRemoved, ParameterRequired, ParameterTypeChanged, BodyTypeChanged}
	crdUpgradeRules = []string{StoredVersionDropped, StorageVersionChanged, ConversionChanged, PrinterColumnRemoved, SubresourceChanged}
)

// ruleCase is one positive (want a finding of rule at level) or negative case.
type ruleCase struct {
	rule, name string
	old, new   string
	want       bool
	level      openapi.Level
}

func runRuleCases(t *testing.T, cases []ruleCase, rules []string, load func(t *testing.T, doc string) *openapi.Document) {
	t.Helper()
	covered := map[string][2]bool{}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			r := Compare(load(t, c.old), load(t, c.new))
			got := findings(r, c.rule, "")
			switch {
			case !c.want && len(got) != 0:
				t.Fatalf("unexpected %s:%s", c.rule, dump(r))
			case c.want && len(got) != 1:
				t.Fatalf("want one %s, got %d:%s", c.rule, len(got), dump(r))
			case c.want && got[0].Level != c.level:
				t.Errorf("level %s, want %s (%s)", got[0].Level, c.level, got[0].Note)
			}
		})
		cv := covered[c.rule]
		if c.want {
			cv[0] = true
		} else {
			cv[1] = true
		}
		covered[c.rule] = cv
	}
	for _, rule := range rules {
		if covered[rule] != [2]bool{true, true} {
			t.Errorf("rule %s lacks a positive or negative case (have %v)", rule, covered[rule])
		}
	}
}

// opDoc is a Swagger 2.0 document with the Thing kind (example.com/v1 and
// v1alpha1) and the given paths object.
func opDoc(t *testing.T, paths string) *openapi.Document {
	t.Helper()
	doc := `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":` + paths + `,"definitions":{
	  "com.example.v1.Thing":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Thing"}]},
	  "com.example.v1.Other":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Other"}]},
	  "com.example.v1alpha1.Thing":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1alpha1","kind":"Thing"}]}}}`
	d, err := openapi.LoadBytes([]byte(doc), t.Name())
	if err != nil {
		t.Fatalf("load generated document: %v\n%s", err, doc)
	}
	return d
}

// thingPaths builds a paths object for /apis/example.com/VERSION/things/{name}:
// a GET whose query parameters and response are given, and optionally a DELETE.
func thingPaths(version, params, response string, withDelete bool) string {
	del := ""
	if withDelete {
		del = `,"delete":{"operationId":"deleteThing","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/com.example.v1.Thing"}}}}`
	}
	return fmt.Sprintf(`{"/apis/example.com/%s/things/{name}":{"parameters":[{"name":"name","in":"path","required":true,"type":"string"}],
	  "get":{"operationId":"readThing","parameters":[%s],"responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/com.example.v1.%s"}}}}%s},
	  "/apis/example.com/%s/things":{"get":{"operationId":"listThing","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/com.example.v1.Thing"}}}}}}`,
		version, params, response, del, version)
}

func TestOperationRules(t *testing.T) {
	const dry = `{"name":"dryRun","in":"query","type":"string"}`
	const dryInt = `{"name":"dryRun","in":"query","type":"integer"}`
	const dryReq = `{"name":"dryRun","in":"query","type":"string","required":true}`
	base := thingPaths("v1", dry, "Thing", true)
	cases := []ruleCase{
		{OperationRemoved, "DELETE gone", base, thingPaths("v1", dry, "Thing", false), true, openapi.Breaking},
		{OperationRemoved, "alpha version", thingPaths("v1alpha1", dry, "Thing", true), thingPaths("v1alpha1", dry, "Thing", false), true, openapi.Warning},
		{OperationRemoved, "whole resource gone, kinds kept", base, `{"/apis/example.com/v1/others":{"get":{"operationId":"listOther","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/com.example.v1.Other"}}}}}}`, true, openapi.Breaking},
		{OperationRemoved, "all kept", base, base, false, 0},
		{ParameterRemoved, "query parameter gone", base, thingPaths("v1", "", "Thing", true), true, openapi.Breaking},
		{ParameterRemoved, "optional parameter added", thingPaths("v1", "", "Thing", true), base, false, 0},
		{ParameterRequired, "new required parameter", thingPaths("v1", "", "Thing", true), thingPaths("v1", dryReq, "Thing", true), true, openapi.Breaking},
		{ParameterRequired, "parameter became required", base, thingPaths("v1", dryReq, "Thing", true), true, openapi.Breaking},
		{ParameterRequired, "required on an alpha version", thingPaths("v1alpha1", "", "Thing", true), thingPaths("v1alpha1", dryReq, "Thing", true), true, openapi.Warning},
		{ParameterRequired, "new optional parameter", thingPaths("v1", "", "Thing", true), base, false, 0},
		{ParameterTypeChanged, "string to integer", base, thingPaths("v1", dryInt, "Thing", true), true, openapi.Breaking},
		{ParameterTypeChanged, "same type", base, base, false, 0},
		{BodyTypeChanged, "response names another type", base, thingPaths("v1", dry, "Other", true), true, openapi.Breaking},
		{BodyTypeChanged, "same response", base, base, false, 0},
	}
	runRuleCases(t, cases, operationRules, opDoc)
}

// crdManifest builds a CRD of kind Widget; versions is the JSON of spec.versions
// entries after name/served/storage, conversion and stored go in spec and status.
func crdManifest(conversion, stored string, versions ...string) string {
	var vs []string
	for _, v := range versions {
		vs = append(vs, `{`+v+`,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object"}}}}}`)
	}
	doc := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	  "spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"scope":"Namespaced","versions":[` + strings.Join(vs, ",") + `]`
	if conversion != "" {
		doc += `,"conversion":{"strategy":"` + conversion + `"}`
	}
	doc += `}`
	if stored != "" {
		doc += `,"status":{"storedVersions":[` + stored + `]}`
	}
	return doc + `}`
}

func loadManifest(t *testing.T, doc string) *openapi.Document {
	t.Helper()
	d, err := openapi.LoadBytes([]byte(doc), t.Name())
	if err != nil {
		t.Fatalf("load generated CRD: %v\n%s", err, doc)
	}
	return d
}

func TestCRDUpgradeRules(t *testing.T) {
	const (
		v1S      = `"name":"v1","served":true,"storage":true`
		v1       = `"name":"v1","served":true,"storage":false`
		v2S      = `"name":"v2","served":true,"storage":true`
		v2       = `"name":"v2","served":true,"storage":false`
		v1Off    = `"name":"v1","served":false,"storage":false`
		status   = `,"subresources":{"status":{}}`
		scale    = `,"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}}`
		colReady = `,"additionalPrinterColumns":[{"name":"Ready","type":"string","jsonPath":".status.ready"}]`
		colOther = `,"additionalPrinterColumns":[{"name":"Ready","type":"string","jsonPath":".status.phase"}]`
	)
	cases := []ruleCase{
		{StoredVersionDropped, "old storage version dropped", crdManifest("", "", v1S), crdManifest("", "", v2S), true, openapi.Breaking},
		{StoredVersionDropped, "storedVersions still lists v1", crdManifest("Webhook", `"v1","v2"`, v1, v2S), crdManifest("Webhook", "", v2S), true, openapi.Breaking},
		{StoredVersionDropped, "v1 kept but no longer served", crdManifest("Webhook", `"v1","v2"`, v1, v2S), crdManifest("Webhook", "", v1Off, v2S), false, 0},
		{StoredVersionDropped, "storage migrated first", crdManifest("Webhook", `"v2"`, v1, v2S), crdManifest("Webhook", "", v2S), false, 0},
		{StorageVersionChanged, "v1 to v2", crdManifest("Webhook", "", v1S, v2), crdManifest("Webhook", "", v1, v2S), true, openapi.Warning},
		{StorageVersionChanged, "unchanged", crdManifest("Webhook", "", v1S, v2), crdManifest("Webhook", "", v1S, v2), false, 0},
		{ConversionChanged, "webhook to none with two versions", crdManifest("Webhook", "", v1S, v2), crdManifest("None", "", v1S, v2), true, openapi.Breaking},
		{ConversionChanged, "none to webhook", crdManifest("", "", v1S, v2), crdManifest("Webhook", "", v1S, v2), true, openapi.Warning},
		{ConversionChanged, "one served version", crdManifest("Webhook", "", v1S), crdManifest("None", "", v1S), true, openapi.Info},
		{ConversionChanged, "unset equals None", crdManifest("", "", v1S, v2), crdManifest("None", "", v1S, v2), false, 0},
		{PrinterColumnRemoved, "column gone", crdManifest("", "", v1S+colReady), crdManifest("", "", v1S), true, openapi.Warning},
		{PrinterColumnRemoved, "column reads another path", crdManifest("", "", v1S+colReady), crdManifest("", "", v1S+colOther), true, openapi.Warning},
		{PrinterColumnRemoved, "columns kept", crdManifest("", "", v1S+colReady), crdManifest("", "", v1S+colReady), false, 0},
		{SubresourceChanged, "scale removed", crdManifest("", "", v1S+scale), crdManifest("", "", v1S+status), true, openapi.Breaking},
		{SubresourceChanged, "status added", crdManifest("", "", v1S), crdManifest("", "", v1S+status), true, openapi.Breaking},
		{SubresourceChanged, "scale added", crdManifest("", "", v1S+status), crdManifest("", "", v1S+scale), false, 0},
	}
	runRuleCases(t, cases, crdUpgradeRules, loadManifest)
}

// alphaDoc is a Swagger 2.0 document whose stable Thing kind has the given spec
// properties; Gadget is served only by example.com/v1alpha1 when gadgetAlpha.
func alphaDoc(t *testing.T, props string, gadgetAlpha bool) *openapi.Document {
	t.Helper()
	gadgetVersion := "v1"
	if gadgetAlpha {
		gadgetVersion = "v1alpha1"
	}
	doc := fmt.Sprintf(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{
	  "com.example.v1.Thing":{"type":"object","properties":{"spec":{"$ref":"#/definitions/com.example.v1.ThingSpec"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Thing"}]},
	  "com.example.v1.ThingSpec":{"type":"object","properties":{%s}},
	  "com.example.v1.GadgetReference":{"type":"object","properties":{"name":{"type":"string"}}},
	  "com.example.%[2]s.Gadget":{"type":"object","properties":{"spec":{"type":"object"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"%[2]s","kind":"Gadget"}]}}}`, props, gadgetVersion)
	d, err := openapi.LoadBytes([]byte(doc), t.Name())
	if err != nil {
		t.Fatalf("load generated document: %v\n%s", err, doc)
	}
	return d
}

// TestAlphaFields: a stable kind's field that is alpha (by its description, or by
// referring to a kind only alpha versions serve) follows the alpha rules.
func TestAlphaFields(t *testing.T) {
	const size = `"size":{"type":"integer","format":"int32"}`
	cases := []struct {
		name        string
		removed     string
		gadgetAlpha bool
		level       openapi.Level
	}{
		{"description says alpha-level", `"width":{"type":"integer","format":"int32","description":"This field is alpha-level and is only honored by servers that enable the Frobber2D feature."}`, false, openapi.Warning},
		{"(Alpha) marker", `"width":{"type":"integer","format":"int32","description":"(Alpha) Using this field requires the Frobber2D feature gate."}`, false, openapi.Warning},
		{"refers to an alpha-only kind", `"gadgetRef":{"$ref":"#/definitions/com.example.v1.GadgetReference"}`, true, openapi.Warning},
		{"refers to a GA kind", `"gadgetRef":{"$ref":"#/definitions/com.example.v1.GadgetReference"}`, false, openapi.Breaking},
		{"mentions an alpha gate of another field", `"width":{"type":"integer","format":"int32","description":"width may be 0 if the alpha feature gate Zero is enabled."}`, false, openapi.Breaking},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Compare(alphaDoc(t, size+","+c.removed, c.gadgetAlpha), alphaDoc(t, size, c.gadgetAlpha))
			got := findings(r, FieldRemoved, "")
			if len(got) != 1 || got[0].Level != c.level {
				t.Fatalf("want one field-removed at %s:%s", c.level, dump(r))
			}
		})
	}
}

func TestFactsParse(t *testing.T) {
	if len(facts) == 0 {
		t.Fatal("facts.txt gave no facts")
	}
	for key, f := range facts {
		if !strings.Contains(key, "#") || f.why == "" {
			t.Errorf("fact %q: want DEFINITION#FIELD and a source comment", key)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("an unknown fact kind was accepted")
		}
	}()
	parseFacts("maybe-required io.example.v1.Thing#spec # ?")
}

// reqDoc is a Swagger 2.0 document of the built-in-like Thing kind: thingRequired
// and specRequired are JSON arrays, desc is the description of ThingSpec.size.
func reqDoc(t *testing.T, thingRequired, specRequired, desc string) *openapi.Document {
	t.Helper()
	doc := fmt.Sprintf(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{
	  "com.example.v1.Thing":{"type":"object","required":%s,"properties":{"metadata":{"type":"object"},"spec":{"$ref":"#/definitions/com.example.v1.ThingSpec"}},
	     "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Thing"}]},
	  "com.example.v1.ThingSpec":{"type":"object","required":%s,"properties":{"size":{"type":"integer","format":"int32","description":%q},"color":{"type":"string"}}}}}`,
		thingRequired, specRequired, desc)
	d, err := openapi.LoadBytes([]byte(doc), t.Name())
	if err != nil {
		t.Fatalf("load generated document: %v\n%s", err, doc)
	}
	return d
}

// TestAnnotationOnlyRequired: a `required` written down for a field the server
// already required is info; a real new requirement stays an error.
func TestAnnotationOnlyRequired(t *testing.T) {
	cases := []struct {
		name     string
		old, new *openapi.Document
		location string
		level    openapi.Level
	}{
		{"old description said Required", reqDoc(t, `[]`, `[]`, "size of the thing. Required."), reqDoc(t, `[]`, `["size"]`, "size of the thing."),
			"com.example.v1.ThingSpec#/properties/size", openapi.Info},
		{"description never said so", reqDoc(t, `[]`, `[]`, "size of the thing; not required."), reqDoc(t, `[]`, `["size"]`, "size of the thing."),
			"com.example.v1.ThingSpec#/properties/size", openapi.Breaking},
		{"spec whose type requires fields", reqDoc(t, `[]`, `["size"]`, ""), reqDoc(t, `["spec"]`, `["size"]`, ""),
			"com.example.v1.Thing#/properties/spec", openapi.Info},
		{"spec whose type requires nothing", reqDoc(t, `[]`, `[]`, ""), reqDoc(t, `["spec"]`, `[]`, ""),
			"com.example.v1.Thing#/properties/spec", openapi.Breaking},
		{"metadata", reqDoc(t, `[]`, `[]`, ""), reqDoc(t, `["metadata"]`, `[]`, ""),
			"com.example.v1.Thing#/properties/metadata", openapi.Info},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Compare(c.old, c.new)
			got := findings(r, RequiredAdded, c.location)
			if len(got) != 1 || got[0].Level != c.level {
				t.Fatalf("want one required-added at %s, %s:%s", c.location, c.level, dump(r))
			}
		})
	}
	// A dropped requirement on a built-in type is a warning (validated in code), on a CRD an error.
	r := Compare(reqDoc(t, `[]`, `["size"]`, ""), reqDoc(t, `[]`, `[]`, ""))
	if got := findings(r, ValidationRelaxed, "com.example.v1.ThingSpec#/properties/size"); len(got) != 1 || got[0].Level != openapi.Warning {
		t.Errorf("dropped required on a built-in type:%s", dump(r))
	}
}
