// Package bytesize reads and writes byte counts as people type them in flags: 1048576,
// 512KiB, 16MiB or 2GiB.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a positive byte count: 1048576, 512KiB, 16MiB, 2GiB, or in powers of ten
// 1KB, 1MB, 1GB.
func Parse(v string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: want a positive number of bytes such as 1048576, 512KiB, 16MiB or 2GiB", v)
	}
	return n * mult, nil
}

// Format writes n as Parse reads it, in the largest binary unit that divides it.
func Format(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

// Flag is a byte count as a command-line flag (a pflag.Value): --memory-limit 2GiB.
type Flag int64

// String is the count as Format writes it, for the flag's default in help.
func (f *Flag) String() string { return Format(int64(*f)) }

// Type names the flag's value in help.
func (f *Flag) Type() string { return "size" }

// Set reads the flag's value with Parse.
func (f *Flag) Set(v string) error {
	n, err := Parse(v)
	if err != nil {
		return err
	}
	*f = Flag(n)
	return nil
}

// Int is the count as an int, capped at the largest one.
func (f Flag) Int() int { return int(min(int64(f), int64(^uint(0)>>1))) }
