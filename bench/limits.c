/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracectl-bench-limits: the machine's physical limits that bound a
 * consumer, measured in the same run as the tracers (bench/compare):
 *
 *   tracectl-bench-limits memcpy [MIB]
 *       memcpy bandwidth: copies a MIB MiB buffer (default 64, larger than
 *       the caches) into another, repeatedly for about a second, after one
 *       warm-up copy; prints {"memcpy_bytes_per_s": N}.
 *
 *   tracectl-bench-limits write PATH BYTES
 *       write bandwidth of the file system holding PATH for a file of BYTES
 *       bytes: writes it in 1 MiB write(2)s (what a consumer does with a
 *       sub-buffer, give or take the size), then fsync(2)s it; prints the
 *       rate up to the last write returning (the page cache's:
 *       "buffered_bytes_per_s") and up to fsync returning (the device's:
 *       "fsync_bytes_per_s"). The file is removed afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double nowS(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int benchMemcpy(size_t mib)
{
	const size_t size = mib << 20;
	char *src = malloc(size), *dst = malloc(size);
	double began, elapsed;
	uint64_t copied = 0;

	if (src == NULL || dst == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < size; i++)
		src[i] = (char) (i * 131u);
	memcpy(dst, src, size); /* fault every page in */
	began = nowS();
	do {
		memcpy(dst, src, size);
		/* Keep the copy observable. */
		__asm__ volatile("" : : "r"(dst) : "memory");
		copied += size;
		elapsed = nowS() - began;
	} while (elapsed < 1.0);
	printf("{\"memcpy_bytes_per_s\": %.0f}\n", (double) copied / elapsed);
	free(src);
	free(dst);
	return 0;
}

static int benchWrite(const char *path, uint64_t bytes)
{
	const size_t chunk = 1u << 20;
	char *buf = malloc(chunk);
	double began, writtenAt, syncedAt;
	uint64_t done = 0;
	int fd;

	if (buf == NULL)
		return 1;
	for (size_t i = 0; i < chunk; i++)
		buf[i] = (char) (i * 7u);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	began = nowS();
	while (done < bytes) {
		size_t n = bytes - done < chunk ? (size_t) (bytes - done) : chunk;
		ssize_t w = write(fd, buf, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "write %s: %s\n", path, strerror(errno));
			close(fd);
			unlink(path);
			return 1;
		}
		done += (uint64_t) w;
	}
	writtenAt = nowS();
	if (fsync(fd) != 0) {
		fprintf(stderr, "fsync %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return 1;
	}
	syncedAt = nowS();
	close(fd);
	unlink(path);
	printf("{\"bytes\": %llu, \"buffered_bytes_per_s\": %.0f, \"fsync_bytes_per_s\": %.0f}\n",
	       (unsigned long long) bytes, (double) bytes / (writtenAt - began),
	       (double) bytes / (syncedAt - began));
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "memcpy") == 0 && argc <= 3) {
		long mib = argc == 3 ? strtol(argv[2], NULL, 10) : 64;
		return benchMemcpy(mib > 0 ? (size_t) mib : 64);
	}
	if (argc == 4 && strcmp(argv[1], "write") == 0) {
		unsigned long long bytes = strtoull(argv[3], NULL, 10);
		return benchWrite(argv[2], bytes > 0 ? bytes : 1);
	}
	fprintf(stderr, "usage: %s memcpy [MIB] | write PATH BYTES\n", argv[0]);
	return 2;
}
