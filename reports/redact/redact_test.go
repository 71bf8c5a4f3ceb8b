package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		secret string // must not survive
		keep   string // must survive
	}{
		{"bearer in text", "sent Bearer abc.DEF-123_secret~x to server", "abc.DEF-123_secret~x", "sent Bearer"},
		{"bearer lower", "authorization=bearer s3cr3tT0kenValue", "s3cr3tT0kenValue", "authorization"},
		{"header line", "GET /api\nAuthorization: Basic dXNlcjpwYXNz\nAccept: */*", "dXNlcjpwYXNz", "Accept: */*"},
		{"cookie line", "Cookie: session=abcdef123456", "abcdef123456", "Cookie:"},
		{"kubeconfig token", "users:\n- name: u\n  user:\n    token: kubeconfig-secret-token\n", "kubeconfig-secret-token", "name: u"},
		{"kubeconfig key data", "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=", "client-key-data"},
		{"kubeconfig password", "    password: hunter2\n    username: admin", "hunter2", "username: admin"},
		{"json password", `{"username":"admin","password":"hunter2"}`, "hunter2", `"username":"admin"`},
		{"json token", `{"kind":"TokenReview","spec":{"token":"tok-abc"}}`, "tok-abc", "TokenReview"},
		{"pem key", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----\nafter", "MIIEpAIBAAKCAQEAsecretkeymaterial", "after"},
		{"pem key cut off", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAAS", "MIIEvQIBADANBgkqhkiG9w0BAQEFAAS", "BEGIN PRIVATE KEY"},
		{"jwt", "token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl here", "eyJhbGciOiJSUzI1NiJ9", "here"},
		{"url userinfo", "GET https://admin:pa55word@127.0.0.1:6443/api", "pa55word", "127.0.0.1:6443/api"},
		{"query token", "GET /api?access_token=qwerty123&watch=true", "qwerty123", "watch=true"},
		{"prose kept", "expected a bearer token to be rejected", "", "expected a bearer token to be rejected"},
		{"continue token kept", `{"metadata":{"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEi"}}`, "", `"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEi"`},
		{"cert kept", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "", "MIIB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in)
			if tc.secret != "" && strings.Contains(got, tc.secret) {
				t.Errorf("secret %q survived: %q", tc.secret, got)
			}
			if tc.keep != "" && !strings.Contains(got, tc.keep) {
				t.Errorf("lost %q: %q", tc.keep, got)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent:\n once:  %q\n twice: %q", got, again)
			}
		})
	}
}

func TestHeaderValue(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"Authorization", "Bearer abc", Mask},
		{"proxy-authorization", "Basic abc", Mask},
		{"Cookie", "a=b", Mask},
		{"Set-Cookie", "a=b", Mask},
		{"Content-Type", "application/json", "application/json"},
		{"Warning", `299 - "token: leaked"`, `299 - "token: ` + Mask + `"`},
	}
	for _, tc := range cases {
		if got := HeaderValue(tc.name, tc.value); got != tc.want {
			t.Errorf("HeaderValue(%q, %q) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}
