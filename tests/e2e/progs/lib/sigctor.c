// SPDX-License-Identifier: GPL-2.0
/*
 * libsigctor.so: its constructor, run by the dynamic loader before the program's entry
 * point, takes a signal (SIGUSR1, handled). snaptrace run must pass it on while it runs
 * the program to its entry point (record/child.c), not give up on the program.
 */
#include <signal.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
}

__attribute__((constructor)) static void early_signal(void)
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
}

int sigctor_got(void)
{
	return got;
}

/* The trigger: a function only this library has. */
void sigctor_work(void)
{
	for (volatile unsigned long i = 0; i < 200000000UL; i++)
		;
}
