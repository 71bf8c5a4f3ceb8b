// Package resources checks what the API concepts document says about
// resources as such — object names, verbs, URIs, collections, the
// single-resource verbs — and the label and field selector grammar.
// Requirement IDs are in spec/catalog/data/resources.yaml.
package resources
