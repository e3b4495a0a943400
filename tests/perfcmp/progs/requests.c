/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 2, thread per request: N requests, each a new thread that
 * runs ~4 ms of CPU in handle_request() and exits, K threads at a time. Prints
 * "handle_request N" (the true number of calls). Usage: requests [N [K]] */
#include <pthread.h>

#include "burn.h"

__attribute__((noinline)) static void handle_request(long id)
{
	BURN_US(3000 + (id % 3) * 1000);
}

static void *request_thread(void *arg)
{
	handle_request((long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 150, k = argc > 2 ? atoi(argv[2]) : 3, done = 0;
	pthread_t t[16];
	if (k < 1 || k > 16)
		k = 3;
	per_us = calibrate();
	while (done < n) {
		int m = 0;
		for (; m < k && done + m < n; m++)
			if (pthread_create(&t[m], NULL, request_thread, (void *)(long)(done + m)) !=
			    0)
				return 1;
		for (int i = 0; i < m; i++)
			pthread_join(t[i], NULL);
		done += m;
		nap_us(2000);
	}
	printf("handle_request %d\n", done);
	return 0;
}
