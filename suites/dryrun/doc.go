// Package dryrun checks ?dryRun=All on every modifying verb: the answer is the
// object that would have been persisted, and nothing is persisted. Requirement
// IDs are in spec/catalog/data/dryrun.yaml.
package dryrun
