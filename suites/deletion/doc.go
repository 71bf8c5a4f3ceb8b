// Package deletion checks the two phases of deleting an object (finalization,
// then removal), propagation policies, preconditions and collection deletes.
// Requirement IDs are in spec/catalog/data/deletion.yaml.
package deletion
