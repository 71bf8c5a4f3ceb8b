// Package apply checks Server-Side Apply: PATCH with
// application/apply-patch+yaml, fieldManager, managedFields, conflicts and
// force. Requirement IDs are in spec/catalog/data/apply.yaml.
package apply
