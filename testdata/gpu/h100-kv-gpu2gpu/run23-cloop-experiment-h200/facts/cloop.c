/* EXPERIMENT (never committed): the native initiator's timed loop in C,
 * through the same NIXL C API calls, so that Go's part can be told apart. */
#include <stdint.h>
#include <time.h>
typedef int (*post_t)(void *, void *, void *);
typedef int (*status_t)(void *, void *);
static inline int64_t now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}
int64_t cloop(void *post, void *status, void *agent, void *req, long iters, int64_t *stamps) {
	post_t p = (post_t)post;
	status_t s = (status_t)status;
	int64_t base = now();
	for (long i = 0; i < iters; i++) {
		stamps[3 * i] = now() - base;
		int st = p(agent, req, 0);
		stamps[3 * i + 1] = now() - base;
		while (st == 1) st = s(agent, req);
		stamps[3 * i + 2] = now() - base;
		if (st != 0) return -1 - i;
	}
	return now() - base;
}
