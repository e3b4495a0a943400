// SPDX-License-Identifier: GPL-2.0
// An e2e target in Go (tests/e2e/cases/langs.sh): no .debug_aranges.
// usage: go ITERS TRIGGER_AT (~0.1 ms per iteration; main.countWords is called
// once at iteration TRIGGER_AT, 0 = never). Build: go build -gcflags=all=-l.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

var sink uint64

//go:noinline
func spin(n uint64) uint64 {
	var s uint64
	for i := uint64(0); i < n; i++ {
		s += i
	}
	return s
}

//go:noinline
func countWords(s string) int {
	return len(strings.Fields(s))
}

func arg(i int, def uint64) uint64 {
	if len(os.Args) > i {
		if v, err := strconv.ParseUint(os.Args[i], 10, 64); err == nil {
			return v
		}
	}
	return def
}

func main() {
	iters, at := arg(1, 3000), arg(2, 0)
	fmt.Printf("ready %d\n", os.Getpid())
	for i := uint64(1); i <= iters; i++ {
		sink += spin(100000)
		if i == at {
			sink += uint64(countWords("one two three"))
		}
	}
}
