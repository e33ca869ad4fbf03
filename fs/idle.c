/* SPDX-License-Identifier: MIT */
/*
 * The idle watch of a persistent view. "Unused" is two facts: no request
 * reached the daemon for the idle time (the request counters of stats.c
 * did not move), and no command is attached (nobody holds a flock on the
 * lock file; jailrun holds a shared one from before it looks for the view
 * until its command has ended). Requests alone would not do: a command that
 * sleeps sends none, and its view must not vanish under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "idle.h"
#include "stats.h"

/* How often the counters are looked at: a quarter of the idle time, within
 * these bounds (ms). */
#define TICK_MIN_MS 100
#define TICK_MAX_MS 5000

static int lock_fd = -1;
static int stop_fd = -1;
static uint64_t idle_limit_ms;
static pthread_t watcher;
static bool running;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int jf_idle_open(const char *lock_path)
{
	if (!lock_path)
		return 0;
	lock_fd = open(lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	return lock_fd < 0 ? -errno : 0;
}

/* Nobody attached: the exclusive lock is ours (and stays ours). */
static bool nobody_attached(void)
{
	return lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) == 0;
}

static void *watch(void *arg)
{
	uint64_t tick = idle_limit_ms / 4, seen = jf_stats_total(), last = now_ms();
	struct pollfd p = {.fd = stop_fd, .events = POLLIN};

	(void)arg;
	if (tick < TICK_MIN_MS)
		tick = TICK_MIN_MS;
	if (tick > TICK_MAX_MS)
		tick = TICK_MAX_MS;
	for (;;) {
		int r = poll(&p, 1, (int)tick);
		uint64_t n = jf_stats_total(), t = now_ms();

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break; /* told to stop */
		if (n != seen) {
			seen = n;
			last = t;
			continue;
		}
		if (t - last < idle_limit_ms)
			continue;
		if (!nobody_attached()) {
			last = t; /* the idle time counts from the last command's end */
			continue;
		}
		kill(getpid(), SIGTERM);
		break;
	}
	return NULL;
}

int jf_idle_start(uint64_t idle_ms)
{
	sigset_t all, old;
	int r;

	if (!idle_ms)
		return 0;
	idle_limit_ms = idle_ms;
	stop_fd = eventfd(0, EFD_CLOEXEC);
	if (stop_fd < 0)
		return -errno;
	/* signals go to the serving threads, whose reads they end */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&watcher, NULL, watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		close(stop_fd);
		stop_fd = -1;
		return r;
	}
	running = true;
	return 0;
}

void jf_idle_stop(void)
{
	uint64_t one = 1;

	if (running) {
		if (write(stop_fd, &one, sizeof(one)) < 0) {
			/* an eventfd write fails only on overflow: it is awake */
		}
		pthread_join(watcher, NULL);
		running = false;
	}
	if (stop_fd >= 0)
		close(stop_fd);
	stop_fd = -1;
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}
