package faultcheck_test

import "github.com/apiconform/apiconform/refserver/faults"

// writesMustFail: the conventions, dry-run, field-validation and apply areas' rows of mustFail.
var writesMustFail = map[string][]string{
	faults.ApplyAsMergePatch:          {"APPLY-MANAGED-FIELDS", "APPLY-REMOVES-UNAPPLIED", "APPLY-SHARED-OWNERSHIP", "APPLY-CONFLICT"},
	faults.ApplyRequiresExisting:      {"APPLY-CREATES"},
	faults.UpdateManagersNotRecorded:  {"APPLY-MANAGED-FIELDS"},
	faults.UIDFromName:                {"CONV-META-UID"},
	faults.TimestampsGoFormat:         {"CONV-META-CREATION-TIMESTAMP", "CONV-DELETE-SETS-TIMESTAMP"},
	faults.GenerationOnEveryWrite:     {"CONV-META-GENERATION"},
	faults.WriteAnswerOldRV:           {"CONV-META-RESOURCE-VERSION"},
	faults.PutMerges:                  {"CONV-PUT-WHOLE-OBJECT"},
	faults.StatusWrittenThroughMain:   {"CONV-STATUS-IGNORED-ON-MAIN"},
	faults.PatchNullIgnored:           {"CONV-PATCH-MERGE", "CONV-PATCH-STRATEGIC"},
	faults.JSONPatchUnsupported:       {"CONV-PATCH-JSON", "CONV-PATCH-JSON-TEST-FAILS"},
	faults.UnknownPatchTypeAsMerge:    {"CONV-STATUS-UNSUPPORTED-PATCH"},
	faults.UnacceptableAnswersJSON:    {"CONV-STATUS-NOT-ACCEPTABLE"},
	faults.MethodNotAllowedAs404:      {"CONV-STATUS-METHOD-NOT-ALLOWED"},
	faults.ClientErrorsAs500:          {"CONV-STATUS-BAD-REQUEST", "CONV-STATUS-BAD-REQUEST-NUMBER", "CONV-STATUS-TOO-LARGE"},
	faults.DeleteAnswersObject:        {"CONV-STATUS-DELETE-SUCCESS", "DRYRUN-DELETE"},
	faults.DeletionTimestampClearable: {"CONV-DELETE-TIMESTAMP-IMMUTABLE"},
	faults.TableAnswersJSON:           {"CONV-TABLE-LIST", "CONV-TABLE-GET", "CONV-TABLE-DEFAULT-COLUMNS"},
	faults.TableNameColumnOnly:        {"CONV-TABLE-DEFAULT-COLUMNS"},
	faults.TableRowsWithoutObject:     {"CONV-TABLE-LIST"},
	faults.DryRunEchoesRequest:        {"DRYRUN-VALIDATION", "DRYRUN-CONFLICT", "DRYRUN-GENERATED-FIELDS"},
	faults.OptionValuesUnchecked:      {"DRYRUN-BAD-VALUE", "FV-BAD-VALUE"},
	faults.BuiltinTypeErrors422:       {"FV-TYPE-ERROR", "FV-TYPE-AND-UNKNOWN"},
	faults.CustomTypeErrors400:        {"FV-TYPE-ERROR-CUSTOM", "FV-TYPE-AND-UNKNOWN"},
	faults.SentManagedFieldsIgnored:   {"APPLY-MANAGED-FIELDS-SENT"},
	faults.ServerSetFieldsOwned:       {"APPLY-MANAGED-FIELDS"},
	faults.SubresourceEntriesUnmarked: {"APPLY-SUBRESOURCE"},

	// Faults of other areas that these areas' specs catch too (appended to
	// their rows by unionRows).
	faults.ValidationAnswers400:         {"CONV-STATUS-INVALID", "DRYRUN-VALIDATION", "DRYRUN-BAD-VALUE", "FV-BAD-VALUE", "FV-TYPE-ERROR-CUSTOM"},
	faults.InvalidNamesNormalized:       {"CONV-STATUS-INVALID", "DRYRUN-VALIDATION"},
	faults.UpdateIgnoresResourceVersion: {"DRYRUN-CONFLICT"},
	faults.FinalizersIgnored:            {"CONV-DELETE-SETS-TIMESTAMP"},
	faults.FieldValidationStrictIgnored: {"FV-TYPE-AND-UNKNOWN"},
	faults.FieldValidationDefaultStrict: {"FV-TYPE-AND-UNKNOWN"},
	faults.GetOmitsTypeMeta:             {"CONV-TABLE-GET"},
}
