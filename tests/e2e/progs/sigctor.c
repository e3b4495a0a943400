// SPDX-License-Identifier: GPL-2.0
/* sigctor: links libsigctor.so (progs/lib/sigctor.c), whose constructor takes SIGUSR1
 * before the entry point. Exits 4 when the handler ran, 1 when it did not. */
int sigctor_got(void);
void sigctor_work(void);

int main(void)
{
	sigctor_work();
	return sigctor_got() ? 4 : 1;
}
