/* tracectl-demo-app: an ordinary LTTng-UST instrumented program, built
 * against Debian's liblttng-ust and nothing of tracectl, used by the demo
 * and the integration tests.
 *
 * Usage: tracectl-demo-app [COUNT [INTERVAL_US [WAIT_FILE]]]
 *   Emits COUNT (default 10) tracectl_demo:tick events, one every
 *   INTERVAL_US microseconds (default 1000), each followed by a
 *   tracectl_demo:debug_note, then one tracectl_demo:done. If WAIT_FILE is
 *   given, waits (up to 60 s) until that file exists before emitting, so a
 *   test can enable events first. Prints "ready <pid>" on stdout once
 *   registered (liblttng-ust's constructor has returned).
 * With TRACECTL_DEMO_FAULT_AT=N in the environment, the tick of seq N takes
 *   its bytes from a page it may not read: lttng-ust sizes that sequence
 *   from its length, reserves the record, then copies the bytes, so the
 *   process dies of SIGSEGV inside the reservation (a writer that never
 *   commits), after its N earlier ticks were committed.
 * Exit status: 0, or 2 on bad arguments. */
#include "tracectl_demo_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int parseU64(const char *s, unsigned long long *out)
{
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s == '\0' || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

static void sleepUs(unsigned long long us)
{
	struct timespec ts = { (time_t) (us / 1000000), (long) (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	unsigned long long count = 10, interval = 1000, seq;
	const char *waitFile = argc > 3 ? argv[3] : NULL;
	static const char *const texts[] = { "alpha", "beta", "gamma", "delta" };
	const char *faultAtEnv = getenv("TRACECTL_DEMO_FAULT_AT");
	unsigned long long faultAt = 0;
	const uint8_t *unreadable = NULL;

	if ((argc > 1 && parseU64(argv[1], &count) != 0) ||
	    (argc > 2 && parseU64(argv[2], &interval) != 0)) {
		fprintf(stderr, "usage: %s [COUNT [INTERVAL_US [WAIT_FILE]]]\n", argv[0]);
		return 2;
	}
	if (faultAtEnv != NULL) {
		void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (parseU64(faultAtEnv, &faultAt) != 0 || page == MAP_FAILED) {
			fprintf(stderr, "%s: bad TRACECTL_DEMO_FAULT_AT\n", argv[0]);
			return 2;
		}
		unreadable = page;
	}
	printf("ready %d\n", (int) getpid());
	fflush(stdout);
	if (waitFile != NULL) {
		for (int i = 0; i < 6000 && access(waitFile, F_OK) != 0; i++)
			sleepUs(10000);
	}
	for (seq = 0; seq < count; seq++) {
		const char *text = texts[seq % 4];
		int32_t triple[3] = { (int32_t) seq, -(int32_t) seq, (int32_t) (seq * 2) };
		uint8_t bytes[5] = { 1, 2, 3, 4, 5 };
		size_t nbytes = strlen(text) < 5 ? strlen(text) : 5;

		const uint8_t *from = unreadable != NULL && seq == faultAt ? unreadable : bytes;

		lttng_ust_tracepoint(tracectl_demo, tick, seq, text, (double) seq / 4.0,
				     triple, from, nbytes);
		lttng_ust_tracepoint(tracectl_demo, debug_note, seq);
		if (interval)
			sleepUs(interval);
	}
	lttng_ust_tracepoint(tracectl_demo, done, count);
	return 0;
}
