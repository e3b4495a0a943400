# SPDX-License-Identifier: GPL-2.0
# Generates N stack samples in `perf script --ns -F comm,pid,tid,time,ip,sym,symoff,dso,event,period`
# form with call chains 6-9 frames deep on two threads, for benchmarks.
#   awk -v N=300000 -f tests/bench/gen_samples.awk > samples.txt
# With -v SW=1, context switches as `perf script --show-switch-events` prints them
# (perf record --switch-events -e sched:sched_switch) come in between: every 4th
# sample a preempted switch out and back in, every 16th a sched:sched_switch sample
# with its blocking chain, a blocking switch out and back in.
BEGIN {
	if (!N) N = 300000
	dso = "/usr/bin/bench"
	for (n = 0; n < N; n++) {
		tid = 4242 + n % 2; t = n * 250000
		printf "           bench %5d/%-5d %5d.%09d:     250000 cpu-clock:u: \n", 4242, tid, 100 + int(t / 1e9), t % 1e9
		d = 3 + n % 4
		printf "\t%16x leaf_%d+0x%x (%s)\n", 4202496 + (n % 7) * 64 + n % 13, n % 7, n % 13, dso
		for (k = d; k > 0; k--)
			printf "\t%16x level_%d+0x1b (%s)\n", 4198400 + k * 512 + 27, k, dso
		printf "\t%16x main+0x2c (%s)\n", 4198188, dso
		printf "\t%16x __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n", 160330
		printf "\t%16x _start+0x21 (%s)\n\n", 4198113, dso
		if (SW && n % 16 == 15) {
			t += 1000
			printf "           bench %5d/%-5d %5d.%09d:          1 sched:sched_switch: \n", 4242, tid, 100 + int(t / 1e9), t % 1e9
			printf "\tffffffff821facd8 __schedule+0x618 ([kernel.kallsyms])\n"
			printf "\tffffffff821fb643 schedule+0x23 ([kernel.kallsyms])\n"
			printf "\t           cf503 clock_nanosleep+0x23 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
			printf "\t%16x level_1+0x2b (%s)\n", 4198400 + 512 + 43, dso
			printf "\t%16x main+0x2c (%s)\n", 4198188, dso
			printf "\t%16x __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n", 160330
			printf "\t%16x _start+0x21 (%s)\n\n", 4198113, dso
			printf "           bench %5d/%-5d %5d.%09d: PERF_RECORD_SWITCH OUT        \n", 4242, tid, 100 + int((t + 100) / 1e9), (t + 100) % 1e9
			printf "           bench %5d/%-5d %5d.%09d: PERF_RECORD_SWITCH IN         \n", 4242, tid, 100 + int((t + 200000) / 1e9), (t + 200000) % 1e9
		} else if (SW && n % 4 == 3) {
			t += 1000
			printf "           bench %5d/%-5d %5d.%09d: PERF_RECORD_SWITCH OUT preempt\n", 4242, tid, 100 + int(t / 1e9), t % 1e9
			printf "           bench %5d/%-5d %5d.%09d: PERF_RECORD_SWITCH IN         \n", 4242, tid, 100 + int((t + 50000) / 1e9), (t + 50000) % 1e9
		}
	}
}
