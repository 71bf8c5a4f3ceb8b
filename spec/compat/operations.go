package compat

import (
	"fmt"
	"strings"

	"github.com/apiconform/apiconform/spec/openapi"
)

// compareOperations: per operation (METHOD path) of the old document, removal,
// parameters and body types. A finding's definition is the operation's key and its
// pointer names the part ("/parameters/query/watch", "/requestBody", "/responses/200");
// the level follows the maturity of the API version the path serves.
func (c *comparer) compareOperations() {
	newOps := map[string]openapi.Operation{}
	for _, op := range c.new.Operations {
		newOps[op.Key()] = op
	}
	// Resources (group/version/resource) with an operation left in the new
	// document, and those whose removal is reported with a definition.
	remaining, covered := map[string]bool{}, map[string]bool{}
	for _, op := range c.new.Operations {
		remaining[resourceOf(op.Path)] = true
	}
	for _, o := range c.old.Operations {
		for _, name := range o.Schemas {
			if _, ok := c.new.Schemas[name]; !ok {
				covered[resourceOf(o.Path)] = true
			}
		}
	}
	reported := map[string]bool{}
	for _, o := range c.old.Operations {
		n, ok := newOps[o.Key()]
		if !ok {
			res := resourceOf(o.Path)
			switch {
			case res == "" || covered[res] || c.removedGVs[openapi.GroupVersionOfPath(o.Path)]:
				// reported as version-removed or definition-removed
			case !remaining[res]:
				if !reported[res] {
					reported[res] = true
					f := c.add(loc{def: res}, OperationRemoved, fmt.Sprintf("resource %s is no longer served: none of its operations is in the new document", res))
					if strings.Contains(openapi.GroupVersionOfPath(o.Path), "alpha") {
						lower(f, openapi.Warning, "alpha API version: compatibility is not strictly required")
					}
				}
			default:
				c.operationRemoved(o)
			}
			continue
		}
		c.compareParameters(o, n)
		if o.RequestBody != "" && n.RequestBody != "" && o.RequestBody != n.RequestBody {
			c.opFinding(o, "/requestBody", BodyTypeChanged, fmt.Sprintf("request body changed from %s to %s", o.RequestBody, n.RequestBody))
		}
		for _, code := range sortedKeys(o.Responses) {
			ot, nt := o.Responses[code], n.Responses[code]
			if ot != "" && nt != "" && ot != nt {
				c.opFinding(o, "/responses/"+code, BodyTypeChanged, fmt.Sprintf("response %s changed from %s to %s", code, ot, nt))
			}
		}
	}
}

// operationRemoved reports one operation gone from a resource that is still served.
func (c *comparer) operationRemoved(o openapi.Operation) {
	f := c.opFinding(o, "", OperationRemoved, fmt.Sprintf("operation %s %s is not in the new document", o.Method, o.Path))
	if o.Deprecated {
		lower(f, openapi.Info, "the old document marked the operation deprecated")
	}
}

func (c *comparer) compareParameters(o, n openapi.Operation) {
	key := func(p openapi.Parameter) string { return p.In + "/" + p.Name }
	oldP, newP := map[string]openapi.Parameter{}, map[string]openapi.Parameter{}
	for _, p := range o.Parameters {
		oldP[key(p)] = p
	}
	for _, p := range n.Parameters {
		newP[key(p)] = p
	}
	for _, k := range sortedKeys(oldP) {
		op := oldP[k]
		np, ok := newP[k]
		switch {
		case !ok:
			c.opFinding(o, "/parameters/"+k, ParameterRemoved, fmt.Sprintf("%s parameter %q removed", op.In, op.Name))
		case op.Type != np.Type:
			c.opFinding(o, "/parameters/"+k, ParameterTypeChanged, fmt.Sprintf("%s parameter %q changed type from %s to %s", op.In, op.Name, orUnset(op.Type), orUnset(np.Type)))
		}
		if ok && !op.Required && np.Required {
			c.opFinding(o, "/parameters/"+k, ParameterRequired, fmt.Sprintf("%s parameter %q became required", op.In, op.Name))
		}
	}
	for _, k := range sortedKeys(newP) {
		if np := newP[k]; np.Required && oldP[k].Name == "" {
			c.opFinding(o, "/parameters/"+k, ParameterRequired, fmt.Sprintf("new required %s parameter %q", np.In, np.Name))
		}
	}
}

func orUnset(s string) string {
	if s == "" {
		return "(untyped)"
	}
	return s
}

// opFinding records a finding about an operation at the level its API version's maturity allows.
func (c *comparer) opFinding(o openapi.Operation, ptr, rule, msg string) *openapi.Finding {
	f := c.add(loc{def: o.Key(), ptr: ptr}, rule, msg)
	if f == nil {
		return nil
	}
	if o.ID != "" {
		f.Operations = []string{o.ID}
	}
	if gv := openapi.GroupVersionOfPath(o.Path); strings.Contains(gv, "alpha") {
		lower(f, openapi.Warning, "alpha API version: compatibility is not strictly required")
	}
	return f
}

// resourceOf names the resource a path serves, "group/version/resource" ("v1/pods"),
// the same for its item, subresource, watch and namespaced forms; "" for non-API paths.
func resourceOf(path string) string {
	gv := openapi.GroupVersionOfPath(path)
	if gv == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	rest := parts[2:] // after api/v1
	if parts[0] == "apis" {
		rest = parts[3:]
	}
	if len(rest) > 0 && rest[0] == "watch" {
		rest = rest[1:]
	}
	if len(rest) > 2 && rest[0] == "namespaces" && rest[1] == "{namespace}" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return ""
	}
	return gv + "/" + rest[0]
}
