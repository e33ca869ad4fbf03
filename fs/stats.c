/* SPDX-License-Identifier: MIT */
/*
 * Request counters (stats.h). One atomic counter per FUSE opcode; the report
 * is formatted by hand so the SIGUSR1 handler may write it (snprintf is not
 * async-signal-safe).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

#define JF_NOPS 64

static atomic_uint_fast64_t counts[JF_NOPS];
static atomic_uint_fast64_t passthrough_opens;
static atomic_uint_fast64_t uring_requests;
static int stats_fd = -1;

/* Names as the kernel's protocol spells them (linux/fuse.h), shortened. */
static const char *const names[JF_NOPS] = {
	[FUSE_LOOKUP] = "LOOKUP",
	[FUSE_FORGET] = "FORGET",
	[FUSE_GETATTR] = "GETATTR",
	[FUSE_SETATTR] = "SETATTR",
	[FUSE_READLINK] = "READLINK",
	[FUSE_SYMLINK] = "SYMLINK",
	[FUSE_MKNOD] = "MKNOD",
	[FUSE_MKDIR] = "MKDIR",
	[FUSE_UNLINK] = "UNLINK",
	[FUSE_RMDIR] = "RMDIR",
	[FUSE_RENAME] = "RENAME",
	[FUSE_LINK] = "LINK",
	[FUSE_OPEN] = "OPEN",
	[FUSE_READ] = "READ",
	[FUSE_WRITE] = "WRITE",
	[FUSE_STATFS] = "STATFS",
	[FUSE_RELEASE] = "RELEASE",
	[FUSE_FSYNC] = "FSYNC",
	[FUSE_SETXATTR] = "SETXATTR",
	[FUSE_GETXATTR] = "GETXATTR",
	[FUSE_LISTXATTR] = "LISTXATTR",
	[FUSE_REMOVEXATTR] = "REMOVEXATTR",
	[FUSE_FLUSH] = "FLUSH",
	[FUSE_INIT] = "INIT",
	[FUSE_OPENDIR] = "OPENDIR",
	[FUSE_READDIR] = "READDIR",
	[FUSE_RELEASEDIR] = "RELEASEDIR",
	[FUSE_FSYNCDIR] = "FSYNCDIR",
	[FUSE_GETLK] = "GETLK",
	[FUSE_SETLK] = "SETLK",
	[FUSE_SETLKW] = "SETLKW",
	[FUSE_ACCESS] = "ACCESS",
	[FUSE_CREATE] = "CREATE",
	[FUSE_INTERRUPT] = "INTERRUPT",
	[FUSE_BMAP] = "BMAP",
	[FUSE_DESTROY] = "DESTROY",
	[FUSE_IOCTL] = "IOCTL",
	[FUSE_POLL] = "POLL",
	[FUSE_NOTIFY_REPLY] = "NOTIFY_REPLY",
	[FUSE_BATCH_FORGET] = "BATCH_FORGET",
	[FUSE_FALLOCATE] = "FALLOCATE",
	[FUSE_READDIRPLUS] = "READDIRPLUS",
	[FUSE_RENAME2] = "RENAME2",
	[FUSE_LSEEK] = "LSEEK",
	[FUSE_COPY_FILE_RANGE] = "COPY_FILE_RANGE",
	[FUSE_SETUPMAPPING] = "SETUPMAPPING",
	[FUSE_REMOVEMAPPING] = "REMOVEMAPPING",
	[FUSE_SYNCFS] = "SYNCFS",
	[FUSE_TMPFILE] = "TMPFILE",
	[52] = "STATX",
};

void jf_stats_count(uint32_t opcode)
{
	atomic_fetch_add_explicit(&counts[opcode < JF_NOPS ? opcode : 0], 1, memory_order_relaxed);
}

void jf_stats_count_passthrough(void)
{
	atomic_fetch_add_explicit(&passthrough_opens, 1, memory_order_relaxed);
}

void jf_stats_count_uring(void)
{
	atomic_fetch_add_explicit(&uring_requests, 1, memory_order_relaxed);
}

uint64_t jf_stats_get(uint32_t opcode)
{
	return opcode < JF_NOPS ? atomic_load(&counts[opcode]) : 0;
}

uint64_t jf_stats_total(void)
{
	uint64_t n = 0;

	for (int i = 0; i < JF_NOPS; i++)
		n += atomic_load_explicit(&counts[i], memory_order_relaxed);
	return n;
}

/* Append @s at *@p, bounded by @end. */
static void put_str(char **p, char *end, const char *s)
{
	while (*s && *p < end)
		*(*p)++ = *s++;
}

static void put_u64(char **p, char *end, uint64_t v)
{
	char digits[24];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && *p < end)
		*(*p)++ = digits[--n];
}

static void put_pair(char **p, char *end, const char *key, uint64_t v)
{
	put_str(p, end, " ");
	put_str(p, end, key);
	put_str(p, end, "=");
	put_u64(p, end, v);
}

void jf_stats_report(void)
{
	char line[2048], *p = line, *end = line + sizeof(line) - 1;
	uint64_t total = 0, other = counts[0];
	int saved = errno;

	for (int i = 1; i < JF_NOPS; i++)
		total += atomic_load(&counts[i]);
	put_str(&p, end, "jailfs: requests:");
	put_pair(&p, end, "total", total + other);
	for (int i = 1; i < JF_NOPS; i++) {
		uint64_t c = atomic_load(&counts[i]);

		if (c && names[i])
			put_pair(&p, end, names[i], c);
		else if (c)
			other += c;
	}
	if (other)
		put_pair(&p, end, "other", other);
	put_pair(&p, end, "passthrough_opens", atomic_load(&passthrough_opens));
	put_pair(&p, end, "uring", atomic_load(&uring_requests));
	*p++ = '\n';
	if (write(stats_fd >= 0 ? stats_fd : STDERR_FILENO, line, (size_t)(p - line)) < 0)
		errno = saved; /* nowhere to say it */
	errno = saved;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	jf_stats_report();
}

int jf_stats_start(const char *path)
{
	struct sigaction sa = {.sa_handler = on_sigusr1, .sa_flags = SA_RESTART};

	if (path) {
		stats_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (stats_fd < 0)
			return -errno;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	return 0;
}

void jf_stats_stop(void)
{
	if (stats_fd >= 0)
		close(stats_fd);
	stats_fd = -1;
}
