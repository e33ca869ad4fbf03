/* SPDX-License-Identifier: MIT */
/*
 * Race suite: writers inside the view against the host. Three threads hold
 * fds of SAFE work/w opened for writing through the view and write to it in
 * a loop while the host (this process, on SOURCE directly) gives the file a
 * RESTRICTED name (rename), adds one (a hard link), or replaces the file
 * under its name. Once the watcher has had time to see the change
 * (JF_SETTLE_MS), the bytes at the RESTRICTED name, or of the file that
 * replaced the one held open, must stop changing, and a write through the
 * fds is refused. Each case runs on a -o fast_open mount (no handles:
 * every write opens the file for itself), a -o nofast_open mount with the
 * daemon on every write, and a -o nofast_open mount where SAFE writes may
 * go through FUSE passthrough (no max_file_size; as root on Linux >= 6.9),
 * where the fds held across the change keep writing (the kernel writes to
 * the backing file itself) and only later opens are refused. Writers run
 * for about a second per case.
 *
 * And handles against each other (test_open_stat_race): threads open,
 * read and close one 2 MiB SAFE file, read-only and read-write, while
 * others stat it by name with attr_timeout=0, so each stat is a GETATTR
 * answered by fstat(2) through one of the file's open handles, outside
 * jf_fs.lock, while RELEASEs close them. Where passthrough is on, the
 * first open of the file registers its backing file outside the lock too,
 * and every handle open at once must share it (the kernel refuses an open
 * with another backing file of the same inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

#define WRITERS 3
#define SETTLE_MS 300 /* the watcher acts within a few ms */
#define RUN_MS 1000

enum host_action { HOST_RENAME, HOST_LINK, HOST_REPLACE };

/* The mount may pass SAFE writes through (passthrough_setup, as root). */
static bool passthrough_mount;

struct writer {
	pthread_t t;
	int fd;
	atomic_bool *stop, *settled;
	long ok_after; /* writes that succeeded once settled */
	int last_err;
};

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned seed = (unsigned)w->fd;

	/* A counter at a random offset: every write that lands changes the file. */
	for (uint16_t c = 0; !atomic_load(w->stop); c++) {
		bool settled = atomic_load(w->settled);
		ssize_t n = pwrite(w->fd, &c, sizeof(c), rand_r(&seed) % 4096);

		if (n > 0 && settled)
			w->ok_after++;
		if (n < 0)
			w->last_err = errno;
	}
	return NULL;
}

/* SAFE work/w of 4 KiB, a RESTRICTED directory ro/ the view has looked up. */
static void prepare(struct jf_mnt *m)
{
	char buf[4097];
	struct stat st;

	memset(buf, '.', 4096);
	buf[4096] = '\0';
	mu_write(m, "work/w", buf);
	assert_ok(stat(mu_v(m, "ro/f"), &st)); /* ro/ is known, so watched */
	assert_ok(stat(mu_v(m, "work/w"), &st));
}

/* The host's change; the SOURCE-relative name that must stop changing. */
static const char *host_change(struct jf_mnt *m, enum host_action a)
{
	switch (a) {
	case HOST_RENAME:
		assert_ok(rename(mu_s(m, "work/w"), mu_s(m, "ro/w")));
		return "ro/w";
	case HOST_LINK:
		assert_ok(link(mu_s(m, "work/w"), mu_s(m, "ro/w2")));
		return "ro/w2";
	case HOST_REPLACE:
	default:
		mu_write(m, "work/w.new", "NEW\n");
		assert_ok(rename(mu_s(m, "work/w.new"), mu_s(m, "work/w")));
		return "work/w";
	}
}

/* A new write open, truncate, chmod and setxattr of view name @rel (the
 * file now has a RESTRICTED name) are refused with EROFS. */
static void refused_by_name(struct jf_mnt *m, const char *rel)
{
	assert_write_refused(mu_v(m, rel), O_WRONLY);
	assert_write_refused(mu_v(m, rel), O_WRONLY | O_TRUNC);
	assert_errno(truncate(mu_v(m, rel), 1), EROFS);
	assert_errno(chmod(mu_v(m, rel), 0600), EROFS);
	assert_errno(setxattr(mu_v(m, rel), "user.jf", "1", 1, 0), EROFS);
}

static void race(struct jf_mnt *m, enum host_action a)
{
	atomic_bool stop = false, settled = false;
	struct writer w[WRITERS];
	const char *target;
	uint64_t sum;
	long ok_after = 0;

	prepare(m);
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){.stop = &stop, .settled = &settled};
		w[i].fd = open(mu_v(m, "work/w"), O_WRONLY | O_CLOEXEC);
		assert_true(w[i].fd >= 0);
		assert_int_equal(pthread_create(&w[i].t, NULL, writer_main, &w[i]), 0);
	}
	sleep_ms(100);
	target = host_change(m, a);
	sleep_ms(SETTLE_MS);
	sum = mu_file_sum(m, target);
	atomic_store(&settled, true);
	sleep_ms(RUN_MS - SETTLE_MS - 100);
	atomic_store(&stop, true);
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(w[i].t, NULL), 0);
		ok_after += w[i].ok_after;
	}
	print_message("%s: %ld writes through the held fds succeeded after the host change "
		      "settled; last error %s\n",
		      target, ok_after, strerror(w[0].last_err));
	/* Passthrough handles write to the backing file without the daemon,
	 * which cannot take them back (docs/security.md): only what is opened
	 * after the change is refused there. */
	if (passthrough_mount && a != HOST_REPLACE) {
		for (int i = 0; i < WRITERS; i++)
			close(w[i].fd);
		sum = mu_file_sum(m, target);
		refused_by_name(m, a == HOST_LINK ? "work/w" : "ro/w");
		assert_true(mu_file_sum(m, target) == sum);
		return;
	}
	if (mu_file_sum(m, target) != sum)
		fail_msg("%s changed on the backing tree after the host change settled", target);
	if (a != HOST_REPLACE) {
		assert_int_equal(ok_after, 0);
		assert_errno(pwrite(w[0].fd, "x", 1, 0), EROFS);
	}
	for (int i = 0; i < WRITERS; i++)
		close(w[i].fd);
	if (a != HOST_REPLACE)
		refused_by_name(m, a == HOST_LINK ? "work/w" : "ro/w");
	if (mu_file_sum(m, target) != sum)
		fail_msg("%s changed on the backing tree through its view name", target);
}

static void test_host_rename(void **state)
{
	race(*state, HOST_RENAME);
}

static void test_host_link(void **state)
{
	race(*state, HOST_LINK);
}

static void test_host_replace(void **state)
{
	race(*state, HOST_REPLACE);
	assert_string_equal(mu_slurp(mu_s(*state, "work/w")), "NEW\n");
}

static int fast_setup(void **state)
{
	passthrough_mount = false;
	return mu_fast_setup(state);
}

static int plain_setup(void **state)
{
	passthrough_mount = false;
	return mu_std_setup(state);
}

/* The standard tree without max_file_size, where a root daemon passes SAFE
 * writes through to the backing file (passthrough.c, may_pass). */
static void no_limits(struct jf_mnt *m)
{
	(void)m;
	assert_int_equal(mu_sh("sed -i '/max_file_size/d' %s", mu_policy_path), 0);
}

static int passthrough_setup(void **state)
{
	passthrough_mount = geteuid() == 0;
	return mu_setup_mode(state, false, no_limits);
}

#define BIG_SIZE (2 << 20) /* >= 1 MiB: read opens pass through too */
#define OPENERS 4
#define STATTERS 2

static const char pattern[] = "0123456789abcdef";
static char stats_path[600];

struct hthread {
	pthread_t t;
	const char *path;
	int flags; /* -1: stat(2) the name instead */
	atomic_bool *stop;
	long done, failed;
	int err;
};

static void *handle_main(void *arg)
{
	struct hthread *h = arg;
	unsigned seed = (unsigned)h->flags + 7;
	char buf[16];
	struct stat st;

	while (!atomic_load(h->stop)) {
		off_t off = (off_t)(rand_r(&seed) % (BIG_SIZE / 16)) * 16;
		int fd;
		bool ok;

		if (h->flags < 0) {
			ok = stat(h->path, &st) == 0 && st.st_size == BIG_SIZE;
		} else {
			fd = open(h->path, h->flags | O_CLOEXEC);
			ok = fd >= 0 && pread(fd, buf, 16, off) == 16 && !memcmp(buf, pattern, 16);
			if (fd >= 0)
				close(fd);
		}
		if (!ok && !h->failed++)
			h->err = errno;
		h->done++;
	}
	return NULL;
}

/* The standard tree without max_file_size (SAFE files may pass through, a
 * 2 MiB one may be opened) plus work/big; --stats goes to stats_path. */
static void big_file(struct jf_mnt *m)
{
	char *b = malloc(BIG_SIZE + 1);

	assert_non_null(b);
	no_limits(m);
	for (size_t i = 0; i < BIG_SIZE; i += 16)
		memcpy(b + i, pattern, 16);
	b[BIG_SIZE] = '\0';
	mu_write(m, "work/big", b);
	free(b);
	snprintf(stats_path, sizeof(stats_path), "%s/stats", m->dir);
}

static const char *const handles_args[] = {"--policy",	  mu_policy_path, "-o",
					   "nofast_open", "-o",		  "attr_timeout=0",
					   "--stats",	  stats_path,	  NULL};
/* The same with every read and write through the daemon. */
static const char *const handles_daemon_args[] = {
	"--policy", mu_policy_path,  "-o",	"nofast_open", "-o", "attr_timeout=0",
	"-o",	    "nopassthrough", "--stats", stats_path,    NULL};

static int handles_plain_setup(void **state)
{
	passthrough_mount = false;
	return mu_setup_with(state, handles_daemon_args, big_file);
}

static int handles_passthrough_setup(void **state)
{
	passthrough_mount = geteuid() == 0;
	return mu_setup_with(state, handles_args, big_file);
}

static void test_open_stat_race(void **state)
{
	struct jf_mnt *m = *state;
	struct hthread h[OPENERS + STATTERS];
	atomic_bool stop = false;
	uint64_t getattrs = 0, passed = 0;
	const char *path = mu_v(m, "work/big");

	for (int i = 0; i < OPENERS + STATTERS; i++) {
		h[i] = (struct hthread){.path = path, .stop = &stop};
		h[i].flags = i >= OPENERS ? -1 : i % 2 ? O_RDWR : O_RDONLY;
		assert_int_equal(pthread_create(&h[i].t, NULL, handle_main, &h[i]), 0);
	}
	sleep_ms(RUN_MS);
	atomic_store(&stop, true);
	for (int i = 0; i < OPENERS + STATTERS; i++) {
		assert_int_equal(pthread_join(h[i].t, NULL), 0);
		print_message("%s: %ld done, %ld failed (first: %s)\n",
			      h[i].flags < 0 ? "stat"
			      : h[i].flags   ? "open rw"
					     : "open ro",
			      h[i].done, h[i].failed, h[i].failed ? strerror(h[i].err) : "-");
		assert_true(h[i].done > 20);
		assert_int_equal(h[i].failed, 0);
	}
	assert_int_equal(mu_requests(m->pid, stats_path, "GETATTR", &getattrs), 0);
	assert_int_equal(mu_requests(m->pid, stats_path, "passthrough_opens", &passed), 0);
	print_message("GETATTR %llu, passthrough opens %llu\n", (unsigned long long)getattrs,
		      (unsigned long long)passed);
	assert_true(getattrs > 40); /* the stats reached the daemon */
	if (passthrough_mount)
		assert_true(passed > 0);
	else
		assert_int_equal(passed, 0);
	assert_true(mu_daemon_alive_for(m->mnt));
}

#define RACE(f, mode)                                                                              \
	{                                                                                          \
#mode "_" #f, f, mode##_setup, mu_std_teardown, NULL                               \
	}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		RACE(test_host_rename, fast),
		RACE(test_host_rename, plain),
		RACE(test_host_rename, passthrough),
		RACE(test_host_link, fast),
		RACE(test_host_link, plain),
		RACE(test_host_link, passthrough),
		RACE(test_host_replace, fast),
		RACE(test_host_replace, plain),
		RACE(test_host_replace, passthrough),
		RACE(test_open_stat_race, handles_plain),
		RACE(test_open_stat_race, handles_passthrough),
	};

	return mu_run_tests("race-writes", tests, argc, argv);
}
