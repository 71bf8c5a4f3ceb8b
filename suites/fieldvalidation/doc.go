// Package fieldvalidation checks the fieldValidation query parameter (Ignore,
// Warn, Strict) on POST, PUT and PATCH, unknown and duplicate fields, and type
// errors. Requirement IDs are in spec/catalog/data/fieldvalidation.yaml.
package fieldvalidation
