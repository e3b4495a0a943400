// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target in C++ (tests/e2e/cases/langs.sh): namespaces, a function
 * template and a lambda, so names are mangled.
 * usage: cxx ITERS TRIGGER_AT   (~0.1 ms per iteration; app::detail::count_words
 * is called once at iteration TRIGGER_AT, 0 = never). Build: g++ -O0 -g.
 */
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

volatile long sink;

namespace app {
namespace detail {
template <typename T> __attribute__((noinline)) T spin(T n)
{
	T s = 0;
	for (T i = 0; i < n; i++)
		s += i;
	return s;
}

__attribute__((noinline)) long count_words(const char *s)
{
	long n = 0;
	for (; *s; s++)
		n += *s == ' ';
	return n + 1;
}
} // namespace detail

struct worker {
	long total = 0;
	__attribute__((noinline)) void step(int i)
	{
		auto body = [this](int k) { total += detail::spin<long>(100000 + k % 2); };
		body(i);
	}
};
} // namespace app

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 3000, at = argc > 2 ? atol(argv[2]) : 0;
	app::worker w;

	printf("ready %d\n", (int)getpid());
	for (long i = 1; i <= iters; i++) {
		w.step((int)i);
		if (i == at)
			sink += app::detail::count_words("one two three");
	}
	sink += w.total;
	return 0;
}
