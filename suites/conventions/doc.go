// Package conventions checks the API conventions every server must follow:
// the Status kind and its reasons per HTTP code, standard metadata, PUT and
// PATCH semantics, the spec/status split, deletion with finalizers and Table
// output. Requirement IDs are in spec/catalog/data/conventions.yaml.
package conventions
