// SPDX-License-Identifier: GPL-2.0
/* Links ctor/lib.c: says whether its SIGTRAP handler ran and whether the process
 * its constructor forked reached main (exit 7); then calls puts (the trigger). */
#include <stdio.h>
#include <sys/wait.h>
int lib_trapped(void);
int lib_is_child(void);
int main(void)
{
	int st = 0;
	if (lib_is_child())
		return 7;
	if (wait(&st) > 0)
		printf("child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 7 ? "ok" : "killed");
	printf("trapped=%d\n", lib_trapped());
	fflush(stdout);
	puts("done");
	return 0;
}
