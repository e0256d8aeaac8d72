package driver

import (
	"regexp"
	"strings"
)

// Redact is the one way dbduel hides secrets in what it shows (SPECs,
// URLs, errors, reports, a live session's change lines): the password of
// every URL in s, and the value of every env= key of a SPEC (a quoted
// value whole, commas included). It errs on hiding more: the user
// information of a URL ends at its last '@', as url.Parse reads it, so a
// password holding '@', ':' or ',' is hidden whole.
func Redact(s string) string {
	return redactEnv(redactURLs(s))
}

// RedactURL is Redact (kept for the URL-shaped callers).
func RedactURL(s string) string { return Redact(s) }

var schemeRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`)

// redactURLs hides the password of each URL: from its scheme to the next
// white space or quote, its user information up to the last '@'.
func redactURLs(s string) string {
	var b strings.Builder
	for {
		loc := schemeRE.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:loc[1]])
		rest := s[loc[1]:]
		end := strings.IndexAny(rest, " \t\n\"'")
		if end < 0 {
			end = len(rest)
		}
		token := rest[:end]
		if at := strings.LastIndex(token, "@"); at >= 0 {
			userinfo := token[:at]
			if c := strings.IndexByte(userinfo, ':'); c >= 0 {
				token = userinfo[:c] + ":***" + token[at:]
			}
		}
		b.WriteString(token)
		s = rest[end:]
	}
}

// redactEnv hides the value of each env=K=V (or env="K=V") key: K stays.
func redactEnv(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "env=")
		if j < 0 || (i+j > 0 && s[i+j-1] != ',' && s[i+j-1] != ' ') {
			if j < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(s[i : i+j+4])
			i += j + 4
			continue
		}
		b.WriteString(s[i : i+j+4])
		i += j + 4
		quoted := i < len(s) && s[i] == '"'
		if quoted {
			b.WriteByte('"')
			i++
		}
		stop := ","
		if quoted {
			stop = `"`
		}
		end := strings.IndexAny(s[i:], stop+" \n")
		if end < 0 {
			end = len(s) - i
		}
		kv := s[i : i+end]
		if k, _, ok := strings.Cut(kv, "="); ok {
			b.WriteString(k + "=***")
		} else {
			b.WriteString(kv)
		}
		i += end
	}
	return b.String()
}
