// Package redacttest holds the planted credentials that redaction tests put
// into every field a report can print, so each test plants the same kinds.
package redacttest

// Secrets are eight kinds of credential, one value each: a bearer token, a
// cookie, a proxy credential, a PEM private key, a kubeconfig token, client
// key data, a password and a service-account JWT. None may survive redaction.
var Secrets = []string{
	"sk-bearer-SECRET-0001",
	"cookie-SECRET-0002",
	"proxy-SECRET-0003",
	"MIIEpAIBAAKCAQEA-SECRET-0004",
	"kubeconfig-token-SECRET-0005",
	"c2VjcmV0LWtleS1kYXRh-SECRET-0006",
	"password-SECRET-0007",
	"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJTRUNSRVQtMDAwOCJ9.c2ln",
}

// Leak is free text (a dump, a log) carrying the secrets that are not
// header values: the bearer token, the key, the kubeconfig fields, the JWT.
const Leak = "Authorization: Bearer sk-bearer-SECRET-0001\n" +
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA-SECRET-0004\n-----END RSA PRIVATE KEY-----\n" +
	"users:\n- user:\n    token: kubeconfig-token-SECRET-0005\n    client-key-data: c2VjcmV0LWtleS1kYXRh-SECRET-0006\n    password: password-SECRET-0007\n" +
	"sa eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJTRUNSRVQtMDAwOCJ9.c2ln"

// SecretBody is a JSON object with secrets in its token and password fields.
const SecretBody = `{"kind":"Secret","data":{"password":"password-SECRET-0007","token":"kubeconfig-token-SECRET-0005"}}`
