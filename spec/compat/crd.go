package compat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apiconform/apiconform/spec/openapi"
)

// compareCRDs: what an operator upgrading a CRD must not get wrong beyond the
// schemas: versions objects are stored in, the storage version, the conversion
// strategy, printer columns and subresources. Only CRDs present on both sides.
func (c *comparer) compareCRDs() {
	for _, res := range sortedKeys(c.old.CRDs) {
		newInfo, ok := c.new.CRDs[res]
		if !ok {
			continue
		}
		oldInfo := c.old.CRDs[res]
		group, kind, _ := strings.Cut(res, "/")
		oldVs, newVs := c.old.CRDVersions[res], c.new.CRDVersions[res]
		resLoc := loc{def: res}

		// Versions objects may be stored in must stay in spec.versions: the ones
		// status.storedVersions lists (known from a server's copy), and the old storage version.
		stored := map[string]string{}
		for _, v := range append(append([]string(nil), oldInfo.StoredVersions...), newInfo.StoredVersions...) {
			stored[v] = "status.storedVersions lists it"
		}
		if sv := storageVersion(oldVs); sv != "" && stored[sv] == "" {
			stored[sv] = "it was the storage version"
		}
		for _, v := range sortedKeys(stored) {
			if findVersion(newVs, v) == nil {
				c.add(resLoc, StoredVersionDropped, fmt.Sprintf("version %s left spec.versions but objects may be stored in it (%s): the API server rejects the CRD until storage is migrated and status.storedVersions no longer lists it", v, stored[v]))
			}
		}

		// A storage version new in this release is reported as new-version-storage.
		if o, n := storageVersion(oldVs), storageVersion(newVs); o != "" && n != "" && o != n && findVersion(oldVs, n) != nil {
			c.add(resLoc, StorageVersionChanged, fmt.Sprintf("storage version changed from %s to %s: objects stay stored as %s until rewritten; keep %s in spec.versions and migrate storage before removing it", o, n, o, o))
		}

		if oldInfo.Conversion != newInfo.Conversion {
			f := c.add(resLoc, ConversionChanged, fmt.Sprintf("spec.conversion.strategy changed from %s to %s", oldInfo.Conversion, newInfo.Conversion))
			switch {
			case servedCount(newVs) < 2:
				lower(f, openapi.Info, "a single served version needs no conversion")
			case newInfo.Conversion == "Webhook":
				lower(f, openapi.Warning, "the webhook must be deployed and reachable before the CRD changes, or every read of another version fails")
			}
		}

		for _, ov := range oldVs {
			nv := findVersion(newVs, ov.Version)
			if nv == nil {
				continue
			}
			vl := loc{def: openapi.CRDDefinitionName(group, ov.Version, kind)}
			for _, sub := range ov.Subresources {
				if !slices.Contains(nv.Subresources, sub) {
					c.add(vl.child("/subresources/"+sub), SubresourceChanged, fmt.Sprintf("subresource %s removed from version %s: requests to /%s fail", sub, ov.Version, sub))
				}
			}
			if !slices.Contains(ov.Subresources, "status") && slices.Contains(nv.Subresources, "status") {
				c.add(vl.child("/subresources/status"), SubresourceChanged, fmt.Sprintf("status subresource added to version %s: writes of status through the main resource are now ignored", ov.Version))
			}
			for _, col := range ov.PrinterColumns {
				i := slices.IndexFunc(nv.PrinterColumns, func(n openapi.PrinterColumn) bool { return n.Name == col.Name })
				switch {
				case i < 0:
					c.add(vl.child("/additionalPrinterColumns/"+openapi.EscapePointer(col.Name)), PrinterColumnRemoved, fmt.Sprintf("printer column %q (%s) removed from version %s", col.Name, col.JSONPath, ov.Version))
				case nv.PrinterColumns[i].JSONPath != col.JSONPath:
					c.add(vl.child("/additionalPrinterColumns/"+openapi.EscapePointer(col.Name)), PrinterColumnRemoved, fmt.Sprintf("printer column %q now shows %s instead of %s", col.Name, nv.PrinterColumns[i].JSONPath, col.JSONPath))
				}
			}
		}
	}
}

func storageVersion(vs []openapi.CRDVersion) string {
	for _, v := range vs {
		if v.Storage {
			return v.Version
		}
	}
	return ""
}

func findVersion(vs []openapi.CRDVersion, name string) *openapi.CRDVersion {
	for i := range vs {
		if vs[i].Version == name {
			return &vs[i]
		}
	}
	return nil
}

func servedCount(vs []openapi.CRDVersion) int {
	n := 0
	for _, v := range vs {
		if v.Served {
			n++
		}
	}
	return n
}
