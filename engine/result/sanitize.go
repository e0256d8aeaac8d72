package result

import (
	"reflect"
	"strings"
	"unicode"
)

// sanitize strips control characters (the terminal's escape sequences
// among them: OSC 52 writes a terminal's clipboard) from every string of
// a result read from a file, so that printing it (compare, report,
// replay) prints text and nothing a terminal acts on.
func (r *Result) sanitize() { cleanStrings(reflect.ValueOf(r).Elem()) }

func cleanStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); strings.IndexFunc(s, isControl) >= 0 && v.CanSet() {
			v.SetString(strings.Map(func(r rune) rune {
				if isControl(r) {
					return -1
				}
				return r
			}, s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			if v.Kind() == reflect.Interface {
				// A map's values (telemetry, evidence): strings are set anew.
				if s, ok := v.Interface().(string); ok && strings.IndexFunc(s, isControl) >= 0 && v.CanSet() {
					v.Set(reflect.ValueOf(strings.Map(dropControl, s)))
				}
				return
			}
			cleanStrings(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanStrings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			cleanStrings(v.Index(i))
		}
	case reflect.Map:
		cleanMap(v)
	}
}

// cleanMap cleans a map's keys and string values (values are not
// addressable: each is set anew).
func cleanMap(v reflect.Value) {
	for _, k := range v.MapKeys() {
		val := v.MapIndex(k)
		nk := k
		if k.Kind() == reflect.String && strings.IndexFunc(k.String(), isControl) >= 0 {
			nk = reflect.ValueOf(strings.Map(dropControl, k.String())).Convert(k.Type())
		}
		nv := reflect.New(val.Type()).Elem()
		nv.Set(val)
		if s, ok := val.Interface().(string); ok {
			nv = reflect.ValueOf(strings.Map(dropControl, s)).Convert(val.Type())
		} else {
			cleanStrings(nv)
		}
		if nk.Interface() != k.Interface() {
			v.SetMapIndex(k, reflect.Value{})
		}
		v.SetMapIndex(nk, nv)
	}
}

// isControl is a C0 or C1 control character but the line breaks and tabs
// text holds.
func isControl(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

func dropControl(r rune) rune {
	if isControl(r) {
		return -1
	}
	return r
}

// WriteAtomic writes data to path as a new file of mode perm: a
// temporary file beside it, then a rename, so that a link at path is
// replaced, never followed, and a crash never leaves half a file.
func WriteAtomic(path string, data []byte, perm uint32) error {
	return writeAtomic(path, data, perm)
}
