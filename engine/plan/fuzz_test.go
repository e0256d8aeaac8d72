package plan

import "testing"

// --threads and --table-size lists: parsed into positive numbers or refused.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"1", "10,32,64", " 4 , 8", "", "0", "-1", "1,,2", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseList("threads", s)
		if err != nil {
			return
		}
		for _, n := range ns {
			if n <= 0 {
				t.Fatalf("%q gave %d", s, n)
			}
		}
	})
}
