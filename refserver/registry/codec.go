package registry

import (
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/jsonvalue"
	"github.com/apiconform/apiconform/refserver/storage"
)

// Objects are stored as JSON in the kind's storage version, without a
// resourceVersion (the store's modRevision is the resourceVersion).

func formatRev(rev int64) string { return strconv.FormatInt(rev, 10) }

// decode reads a stored object into version, with resourceVersion rev
// (0 = the value's own modRevision).
func (r *Registry) decode(k *Kind, version string, kv storage.KeyValue, rev int64) (Object, error) {
	obj, err := parseStored(kv.Value)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("decode %s: %w", kv.Key, err))
	}
	return r.fromStored(k, version, kv, rev, obj)
}

// decodeKeeping is decode for a write that carries the stored
// metadata.managedFields as their bytes (keptFields): the object without
// them, and the bytes. mf is nil, and obj has them, where they were not
// kept (none stored, or stored bytes Parse leaves to encoding/json).
func (r *Registry) decodeKeeping(k *Kind, version string, kv storage.KeyValue) (obj Object, mf []byte, err error) {
	obj, mf, ok := jsonvalue.ParseKeeping(kv.Value, jsonvalue.Float64, "metadata", "managedFields")
	if !ok {
		obj, err = r.decode(k, version, kv, 0)
		return obj, nil, err
	}
	obj, err = r.fromStored(k, version, kv, 0, obj)
	return obj, mf, err
}

// fromStored is decode's work after the parse.
func (r *Registry) fromStored(k *Kind, version string, kv storage.KeyValue, rev int64, obj Object) (Object, error) {
	if obj == nil { // a stored JSON null: never written by the registry, but not a panic either
		return nil, apierrors.NewInternalError(fmt.Errorf("decode %s: the stored value is null", kv.Key))
	}
	if rev == 0 {
		rev = kv.ModRevision
	}
	meta(obj)["resourceVersion"] = formatRev(rev)
	obj, err := k.fromStorage(obj, version)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("convert %s to %s: %w", kv.Key, version, err))
	}
	return obj, nil
}

// withKeptFields puts mf, managedFields a write kept as bytes, back into
// obj's metadata, decoded as decode decodes them.
func withKeptFields(obj Object, mf []byte) error {
	v, err := decodeKeptFields(mf)
	if err != nil {
		return err
	}
	meta(obj)["managedFields"] = v
	return nil
}

// decodeKeptFields decodes managedFields a write kept as bytes, as decode
// decodes them.
func decodeKeptFields(mf []byte) (any, error) {
	v, ok := jsonvalue.ParseValue(mf, jsonvalue.Float64)
	if !ok {
		if err := json.Unmarshal(mf, &v); err != nil {
			return nil, fmt.Errorf("decode the kept managedFields: %w", err)
		}
	}
	return v, nil
}

// parseStored decodes a stored value as encoding/json does: in one pass
// without reflection for most values, with encoding/json itself for the
// rest (escapes, odd numbers) and for its error.
func parseStored(b []byte) (Object, error) {
	if obj, ok := jsonvalue.Parse(b, jsonvalue.Float64); ok {
		return obj, nil
	}
	var obj Object
	err := json.Unmarshal(b, &obj)
	return obj, err
}

// fromStorage converts a stored object to version. A custom resource is
// pruned by the version's schema, as kube-apiserver prunes after converting.
func (k *Kind) fromStorage(obj Object, version string) (Object, error) {
	if k.StoredAs != nil {
		conv, err := k.FromStored(obj)
		if err != nil {
			return nil, err
		}
		obj = conv
	} else if version != k.StorageVersion() {
		if k.Convert != nil {
			k.setTypeMeta(obj, k.StorageVersion())
			conv, err := k.Convert(obj, version)
			if err != nil {
				return nil, err
			}
			obj = conv
		}
		k.pruneConverted(obj, version)
	}
	k.setTypeMeta(obj, version)
	return obj, nil
}

// throughStorage drops, in place, what a custom resource written in version
// loses on its way to the storage version and back: kube-apiserver answers
// a write with the stored object, pruned after each conversion.
func (k *Kind) throughStorage(obj Object, version string) {
	if k.StoredAs == nil && version != k.StorageVersion() && k.Convert == nil {
		k.pruneConverted(obj, k.StorageVersion())
		k.pruneConverted(obj, version)
	}
}

// pruneConverted silently drops the fields a custom resource's version does
// not declare, after a conversion (the request's own unknown fields were
// reported when its body was decoded).
func (k *Kind) pruneConverted(obj Object, version string) {
	if k.TypedOf(version) == nil && k.Schemas != nil {
		fieldcheck.Prune(obj, k.Schemas[version])
	}
}

// encode renders obj (named by its apiVersion) in the storage version,
// with mf as its metadata.managedFields when set (keptFields), appending
// to dst where nothing is converted; lay, when not nil, then gets the
// bytes' layout (appendStored), its mode left 0 otherwise.
func encode(dst []byte, k *Kind, obj Object, mf []byte, lay *spliceLayout) ([]byte, error) {
	if k.StoredAs != nil {
		return encodeStoredAs(k, obj, mf)
	}
	storageAV := k.APIVersion(k.StorageVersion())
	if av := str(obj["apiVersion"]); av == "" || av == storageAV {
		// Nothing to convert: obj as stored, without resourceVersion, is
		// written straight from obj (no copy to leave it out of).
		b, err := appendStored(dst, obj, storageAV, k.Kind, mf, lay)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	c := deepCopy(obj)
	if mf != nil {
		if err := withKeptFields(c, mf); err != nil {
			return nil, err
		}
	}
	if k.Convert != nil {
		conv, err := k.Convert(c, k.StorageVersion())
		if err != nil {
			return nil, err
		}
		c = conv
	}
	k.pruneConverted(c, k.StorageVersion())
	delete(meta(c), "resourceVersion")
	k.setTypeMeta(c, k.StorageVersion())
	return MarshalJSON(c)
}

// encodeStoredAs is encode for a kind stored as another (Kind.StoredAs):
// obj converted to that kind's stored form.
func encodeStoredAs(k *Kind, obj Object, mf []byte) ([]byte, error) {
	if mf != nil { // the kept managedFields go back in, on a copy
		obj = deepCopy(obj)
		if err := withKeptFields(obj, mf); err != nil {
			return nil, err
		}
	}
	stored, err := k.ToStored(obj) // a new object: obj stays as it is
	if err != nil {
		return nil, err
	}
	delete(meta(stored), "resourceVersion")
	k.StoredAs.setTypeMeta(stored, k.StoredAs.StorageVersion())
	return MarshalJSON(stored)
}
