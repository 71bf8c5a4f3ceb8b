// Package redact removes credentials from text and HTTP headers before anything
// is written to a report. It is the only place that knows what a secret looks
// like; every renderer goes through result.Sanitize, which calls it.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every secret value.
const Mask = "[REDACTED]"

// sensitiveHeaders are headers whose whole value is a credential.
var sensitiveHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"set-cookie":          true,
	"x-auth-token":        true,
	"x-api-key":           true,
}

// IsSensitiveHeader reports whether a header's value is always a credential.
func IsSensitiveHeader(name string) bool {
	return sensitiveHeaders[strings.ToLower(strings.TrimSpace(name))]
}

// HeaderValue returns the value to show for header name: the mask for
// credential headers, otherwise the value with any embedded secret removed.
func HeaderValue(name, value string) string {
	if IsSensitiveHeader(name) {
		return Mask
	}
	return String(value)
}

var (
	// PEM private keys (RSA, EC, PKCS#8, encrypted), complete or cut off.
	pemKey = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)
	// "Authorization: ..." style header lines inside free text (dumps, logs).
	headerLine = regexp.MustCompile(`(?im)^([ \t>]*(?:authorization|proxy-authorization|cookie|set-cookie|x-auth-token|x-api-key)[ \t]*:[ \t]*)\S.*$`)
	// Bearer credentials wherever they appear (8+ characters, so prose such as
	// "a bearer token" stays readable).
	schemeToken = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]{8,}=*`)
	// kubeconfig / JSON / query secrets: token: x, "password": "x", client-key-data=x.
	keyValue = regexp.MustCompile(`(?i)(["']?\b(?:token|id-token|access-token|refresh-token|access_token|client-key-data|client-secret|password|bearertoken)["']?[ \t]*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s,;&}\]"'\[][^\s,;&}\]"']*)`)
	// JSON Web Tokens (service-account tokens) even without a Bearer prefix.
	jwt = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// user:password@ in URLs.
	urlUserinfo = regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`)
)

// String returns s with every credential it recognises replaced by Mask.
// It is idempotent: String(String(s)) == String(s).
func String(s string) string {
	if s == "" {
		return s
	}
	s = pemKey.ReplaceAllString(s, "-----BEGIN ${1}PRIVATE KEY----- "+Mask+" -----END ${1}PRIVATE KEY-----")
	s = headerLine.ReplaceAllString(s, "${1}"+Mask)
	s = schemeToken.ReplaceAllStringFunc(s, func(m string) string {
		sub := schemeToken.FindStringSubmatch(m)
		return sub[1] + sub[2] + Mask
	})
	s = keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		v := sub[2]
		switch {
		case strings.HasPrefix(v, `"`):
			return sub[1] + `"` + Mask + `"`
		case strings.HasPrefix(v, `'`):
			return sub[1] + `'` + Mask + `'`
		}
		return sub[1] + Mask
	})
	s = jwt.ReplaceAllString(s, Mask)
	s = urlUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	return s
}
