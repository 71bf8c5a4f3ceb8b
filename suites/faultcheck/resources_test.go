package faultcheck_test

import "github.com/apiconform/apiconform/refserver/faults"

// resourcesMustFail: the resources and deletion areas' rows of mustFail.
var resourcesMustFail = map[string][]string{
	faults.NamesUniqueAcrossNamespaces: {"RES-NAME-UNIQUE-PER-NAMESPACE"},
	// Bad_Name is also the spec's way of provoking a 422.
	faults.InvalidNamesNormalized:      {"RES-NAME-DNS-SUBDOMAIN", "RES-ERROR-STATUS-CODE"},
	faults.MissingNameGenerated:        {"RES-NAME-REQUIRED"},
	faults.PutCollectionCreates:        {"RES-VERB-PUT-COLLECTION", "RES-ERROR-STATUS-CODE"},
	faults.PutCreatesMissing:           {"RES-VERB-PUT-MISSING"},
	faults.UnknownSubresourceIsParent:  {"RES-URI-UNKNOWN-SUBRESOURCE"},
	faults.ClusterScopedUnderNamespace: {"RES-URI-CLUSTER-SCOPED-IN-NAMESPACE"},
	faults.NamespaceCreatedOnDemand:    {"RES-URI-NAMESPACE-MISSING"},
	faults.CreateAcceptsList:           {"RES-SINGLE-NO-LIST-BODY"},
	// The validation spec sends a bad label and a bad annotation: with
	// either dropped, one of the two causes is missing.
	faults.InvalidLabelsDropped:       {"RES-LABEL-SYNTAX", "RES-VALIDATION-FAILURE"},
	faults.InvalidAnnotationsDropped:  {"RES-ANNOTATION-SYNTAX", "RES-VALIDATION-FAILURE"},
	faults.TableNotPreferred:          {"RES-TABLE-PREFERRED"},
	faults.TableNotPaged:              {"RES-TABLE-PAGING"},
	faults.TableParameterOrder:        {"RES-TABLE-PREFERRED"},
	faults.OptionsAnswers404:          {"RES-OPTIONS"},
	faults.RequiredFieldsZeroed:       {"RES-REQUIRED-FIELD"},
	faults.CreateAnswerOmitsDefaults:  {"RES-DEFAULTS-VISIBLE"},
	faults.DefaultAnswersYAML:         {"RES-JSON-DEFAULT"},
	faults.DiscoveryKindNames:         {"RES-DISCOVERY-RESOURCE-NAMES"},
	faults.GetOmitsTypeMeta:           {"RES-KIND-APIVERSION"},
	faults.ErrorsAnswer200:            {"RES-ERROR-STATUS-CODE", "RES-VERB-PUT-COLLECTION", "RES-VERB-PUT-MISSING", "RES-URI-UNKNOWN-SUBRESOURCE"},
	faults.ValidationFirstErrorOnly:   {"RES-VALIDATION-FAILURE"},
	faults.MalformedListRVIgnored:     {"RES-RV-MALFORMED-LIST"},
	faults.SMPReplaceIgnored:          {"RES-SMP-REPLACE-MAP"},
	faults.SizeLimitOnRequestBody:     {"RES-DATA-SIZE-LIMIT"},
	faults.ProtobufCustomResourceJSON: {"RES-PROTOBUF-CUSTOM-RESOURCE"},
	faults.SecondDeleteConflicts:      {"DEL-SECOND-DELETE"},
	faults.SecondDeleteRestamps:       {"DEL-SECOND-DELETE"},
	faults.FinalizerReorderRefused:    {"DEL-FINALIZERS-REORDER"},
	faults.NewFinalizersDropped:       {"DEL-NO-NEW-FINALIZERS"},
	faults.PropagationPolicyIgnored:   {"DEL-PROPAGATION-FOREGROUND", "DEL-PROPAGATION-ORPHAN"},
	faults.BackgroundAsForeground:     {"DEL-PROPAGATION-BACKGROUND"},
	faults.SchemaConstraintsIgnored:   {"RES-SCHEMA-CONSTRAINTS"},
	faults.NullFieldRefused:           {"RES-DEFAULT-NULL"},
	// Every 422 answer of the area turns into a 400.
	faults.ValidationAnswers400: {"RES-VALIDATION-FAILURE", "RES-NAME-DNS-SUBDOMAIN", "RES-NAME-REQUIRED", "RES-LABEL-SYNTAX",
		"RES-ANNOTATION-SYNTAX", "RES-REQUIRED-FIELD", "RES-DATA-SIZE-LIMIT", "RES-RV-MATCH-UNSUPPORTED", "RES-ERROR-STATUS-CODE",
		"DEL-NO-NEW-FINALIZERS"},
}
