// Package resourceversion checks the resourceVersion semantics of get and
// list: one spec per cell of the documented get and list tables (generated
// from spec/catalog's table data), the resourceVersion fields, the
// Most-recent / Any / Not-older-than / Exact meanings, 410 Gone for history
// that is gone and the answers for resourceVersions from the future.
// Requirement IDs are in spec/catalog/data/resourceversion.yaml.
package resourceversion
