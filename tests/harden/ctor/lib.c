// SPDX-License-Identifier: GPL-2.0
/* A library whose constructor does what real ones do before main (issue 20 item
 * 8): LIBMODE=t raises SIGTRAP (a debugger check), LIBMODE=f forks. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t trapped;
static int is_child;
static void on_trap(int s)
{
	(void)s;
	trapped = 1;
}
__attribute__((constructor)) static void init(void)
{
	const char *m = getenv("LIBMODE");
	if (m && strchr(m, 't')) {
		signal(SIGTRAP, on_trap);
		raise(SIGTRAP);
	}
	if (m && strchr(m, 'f'))
		is_child = fork() == 0;
}
int lib_trapped(void)
{
	return trapped;
}
int lib_is_child(void)
{
	return is_child;
}
