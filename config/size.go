package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize takes, longest first so that "MiB" is not read as "B".
var sizeUnits = []struct {
	name string
	mul  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseSize reads an amount of memory as the config writes it: a number of bytes, or a
// number with a unit ("768MiB", "1.5GiB", "900MB"; KiB, MiB, GiB and TiB are powers of
// two, kB, MB, GB and TB powers of ten).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mul := 1.0
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			t, mul = strings.TrimSpace(rest), u.mul
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "eEnNxX") {
		return 0, fmt.Errorf("%q is not an amount of memory (want e.g. 768MiB, 1.5GiB or a number of bytes)", s)
	}
	v := n * mul
	if v < 0 || v >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not an amount of memory: out of range (want e.g. 768MiB, 1.5GiB or a number of bytes)", s)
	}
	return int64(v), nil
}
