// Package compatibility checks that API changes stay compatible: multi-version
// custom resources round-trip, PUT of a GET keeps working, fields from newer
// clients are handled per field-validation level, and the changing-the-API
// document's Frobber example (singular param / plural params across v6 and
// v7beta1, served by the reference server only) behaves as the document
// prescribes. Requirement IDs are in spec/catalog/data/compatibility.yaml.
package compatibility
