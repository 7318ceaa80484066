package remediate

import (
	"fmt"
	"testing"
)

func records(accounts ...int) []*Record {
	var out []*Record
	for a, n := range accounts {
		for i := range n {
			r := &Record{}
			r.ID = fmt.Sprintf("a%d-%d", a, i)
			r.Account = fmt.Sprintf("acct-%d", a)
			out = append(out, r)
		}
	}
	return out
}

func TestWaves_canaryThenDoubling(t *testing.T) {
	l := Limits{}.withDefaults()
	cases := []struct {
		name  string
		in    []*Record
		sizes []int
	}{
		{"ten or fewer run at once", records(4, 6), []int{10}},
		{"canary is the first account when it is smaller than 5%", records(1, 40), []int{1, 2, 4, 8, 16, 10}},
		{"canary is 5% when the first account is larger", records(30, 30), []int{3, 6, 12, 24, 15}},
		{"at least one", records(11), []int{1, 2, 4, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := waves(l, c.in)
			var got []int
			total := 0
			for _, w := range ws {
				got = append(got, len(w))
				total += len(w)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.sizes) {
				t.Errorf("wave sizes %v, want %v", got, c.sizes)
			}
			if total != len(c.in) {
				t.Errorf("waves hold %d actions, want %d", total, len(c.in))
			}
		})
	}
}

func TestBreaker_tripsOnConsecutiveFailuresOrRatio(t *testing.T) {
	cases := []struct {
		name    string
		results string // o ok, x failed
		trips   int    // index of the result that trips it, -1 for never
	}{
		{"five failures in a row", "xxxxx", 4},
		{"ratio trips before five in a row", "oooooxxxxx", 6},
		{"ratio over 20% once five have run", "xoxoo", 4},
		{"one failure in five is 20%, not over", "xoooooooo", -1},
		{"the ratio waits for five", "xx", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &breaker{l: Limits{}.withDefaults()}
			at := -1
			for i, ch := range c.results {
				b.record(ch == 'o')
				if b.tripped != "" {
					at = i
					break
				}
			}
			if at != c.trips {
				t.Errorf("tripped at %d (%q), want %d", at, b.tripped, c.trips)
			}
		})
	}
}
