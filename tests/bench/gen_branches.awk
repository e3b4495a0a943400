# SPDX-License-Identifier: GPL-2.0
# Generates N lines of `perf script` Intel PT branch output (magic-trace's field set) for
# benchmarks: a loop over NSYM functions, each calling a leaf, 4 branches per timestamp.
#   awk -v N=2000000 -v NSYM=500 -f tests/bench/gen_branches.awk > big.txt
BEGIN {
	if (!N) N = 2000000
	if (!NSYM) NSYM = 500
	dso = "/usr/bin/bench"
	fmt = " 4242/4242 %16s:          1           branches:u:   %-18s %16x %s (%s) => %16x %s (%s)\n"
	printf fmt, "1.000000000", "tr strt", 0, "[unknown]", "[unknown]", 4198400, "main+0x0", dso
	t = 0; n = 1
	while (n < N) {
		for (i = 0; i < NSYM && n < N; i++) {
			f = "fn_" i; a = 4202496 + i * 256
			ts = sprintf("%d.%09d", 1 + int(t / 1e9), t % 1e9); t += 7
			printf fmt, ts, "call", 4198416, "main+0x10", dso, a, f "+0x0", dso
			printf fmt, ts, "call", a + 16, f "+0x10", dso, 4198912, "leaf+0x0", dso
			printf fmt, ts, "jcc", 4198920, "leaf+0x8", dso, 4198916, "leaf+0x4", dso
			printf fmt, ts, "return", 4198930, "leaf+0x12", dso, a + 21, f "+0x15", dso
			printf fmt, ts, "return", a + 32, f "+0x20", dso, 4198421, "main+0x15", dso
			n += 5
		}
	}
}
