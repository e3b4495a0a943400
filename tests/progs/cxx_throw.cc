// SPDX-License-Identifier: GPL-2.0
// A C++ exception thrown three frames down and caught in main: the unwinder
// leaves thrower, middle and outer without executing their returns.
#include <unistd.h>

__attribute__((noinline)) void thrower(int n)
{
	if (n > 0)
		throw n;
}

__attribute__((noinline)) void middle(int n)
{
	thrower(n);
	write(1, "no\n", 3);
}

__attribute__((noinline)) void outer(int n)
{
	middle(n);
	write(1, "no\n", 3);
}

int main()
{
	try {
		outer(1);
	} catch (int e) {
		write(1, "caught\n", 7);
	}
	return 0;
}
