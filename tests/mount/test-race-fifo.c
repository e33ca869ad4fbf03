/* SPDX-License-Identifier: MIT */
/*
 * Race suite, opens of the backing tree that could block: the daemon opens a
 * backing file by its view path, and that path may name a FIFO by the time
 * it is opened. Opening a FIFO with no writer sleeps until one comes, so a
 * daemon that opens it without looking first wedges the worker thread, and
 * the caller's request with it, until someone on the host opens the other
 * end.
 *
 *   - swap: a directory holding a regular file f is exchanged (through the
 *     view and on the host) with one holding a FIFO f made through the view,
 *     while threads open the regular file by its cached inode
 *     (/proc/self/fd of an O_PATH fd: the kernel sends OPEN for the regular
 *     file whatever the name now holds) and read it. Every open and read
 *     must finish within WEDGE_S seconds, and the daemon must answer after.
 *   - the same swap made by a real program (python3) in jailrun --source
 *     and in jailrun --root on root's default mount: it finishes;
 *   - own FIFO: a FIFO the agent makes through the view opens and works as
 *     POSIX says, and no OPEN reaches the daemon for it;
 *   - replaced: the host replaces a file (f, and x.pem whose zone depends on
 *     its content) with a FIFO behind the daemon's back; an open of the old
 *     inode must fail fast (ESTALE, ENOENT, EIO), never hang.
 *
 * Each case runs on a plain mount, with -o fast_open (the kernel opens
 * without asking; the READ opens the backing file), the replaced case also
 * on a --read-only view and at audit level all, and, where the kernel
 * has FUSE over io_uring, with -o io_uring (the fuse module's enable_uring
 * is turned on for the case and put back).
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount-util.h"

#define WORKERS 8
#define RACE_MS 1500
#define WEDGE_S 5

#define URING_PARAM "/sys/module/fuse/parameters/enable_uring"

static const char cert[] = "-----BEGIN CERTIFICATE-----\n"
			   "MIIBszCCAVmgAwIBAgIUJ2n3dGVzdGNlcnRpZmljYXRlMAoGCCqGSM49BAMC\n"
			   "-----END CERTIFICATE-----\n";

enum mode { MODE_PLAIN, MODE_FAST, MODE_URING, MODE_RO, MODE_AUDIT };

/* What the output calls each mode; the -o option of the first three. */
static const char *const mode_opt[] = {"nofast_open", "fast_open", "io_uring", "read-only",
				       "audit-all"};
static char audit_path[400];

static struct jf_mnt M;
static char uring_was = 0; /* enable_uring before the case turned it on */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Turn FUSE over io_uring on for this case; false when the kernel has none. */
static bool uring_on(void)
{
	char c = 0;
	int fd = open(URING_PARAM, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1 || pwrite(fd, "Y", 1, 0) != 1) {
		close(fd);
		return false;
	}
	close(fd);
	uring_was = c;
	return true;
}

static void uring_restore(void)
{
	int fd;

	if (!uring_was)
		return;
	fd = open(URING_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pwrite(fd, &uring_was, 1, 0) != 1)
			fprintf(stderr, "could not put back %s\n", URING_PARAM);
		close(fd);
	}
	uring_was = 0;
}

/* Mount the tree in @mode; false (and the case is skipped) when @mode is
 * io_uring and the kernel lacks it. */
static bool mount_mode(enum mode mode)
{
	const char *opt[] = {"-o", mode_opt[mode], NULL};
	const char *ro[] = {"--read-only", NULL};
	const char *audit[] = {"--audit", audit_path, "--audit-level", "all", NULL};
	const char *const *args = mode == MODE_RO ? ro : mode == MODE_AUDIT ? audit : opt;

	snprintf(audit_path, sizeof(audit_path), "%s/audit.jsonl", M.dir);
	if (mode == MODE_URING && !uring_on()) {
		fprintf(stderr, "# no FUSE over io_uring here (%s)\n", URING_PARAM);
		return false;
	}
	if (mu_mount(&M, args, 0) < 0)
		fail_msg("jailfs did not mount (%s)", mode_opt[mode]);
	return true;
}

/* Let every reader the daemon (or anyone) waits on in a FIFO below SOURCE
 * go: open each FIFO's write end once, without blocking. */
static void unwedge(void)
{
	static const char *const fifos[] = {"a/f", "b/f", "f", "x.pem"};

	for (size_t i = 0; i < sizeof(fifos) / sizeof(fifos[0]); i++) {
		int fd = open(mu_s(&M, fifos[i]), O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
}

/* Does the daemon still answer a stat of the view's root (in a child, at
 * most WEDGE_S s)? */
static bool daemon_answers(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct stat st;

		_exit(stat(mu_v(&M, ""), &st) == 0 ? 0 : 1);
	}
	for (int i = 0; i < WEDGE_S * 50; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		usleep(20000);
	}
	unwedge();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return false;
}

/* ---------- swap ---------- */

struct worker {
	pthread_t th;
	_Atomic double started; /* start of the operation under way, 0 when idle */
	atomic_int ops;
	atomic_int wedged;
};

static struct worker workers[WORKERS];
static atomic_bool stop;

/* Open the view's a/f by the inode the kernel has cached for it, if that
 * is the regular file, and read it. */
static void open_and_read(struct worker *w)
{
	char proc[64], buf[64];
	struct stat st;
	int pfd, fd;

	pfd = open(mu_v(&M, "a/f"), O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return;
	if (fstat(pfd, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		atomic_store(&w->started, now_s());
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			/* a READ the daemon serves, also where no OPEN was sent */
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			(void)!pread(fd, buf, sizeof(buf), 0);
			close(fd);
		}
		atomic_store(&w->started, 0.0);
		atomic_fetch_add(&w->ops, 1);
	}
	close(pfd);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop))
		open_and_read(w);
	return NULL;
}

/* Exchange a and b, through the view (the agent's swap) or on the host. */
static void swap_dirs(int i)
{
	const char *from = i % 2 ? mu_v(&M, "a") : mu_s(&M, "a");
	const char *to = i % 2 ? mu_v(&M, "b") : mu_s(&M, "b");

	(void)renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
}

/* Workers whose operation has run for WEDGE_S s or more. */
static int count_wedged(void)
{
	double t = now_s(), s;
	int n = 0;

	for (int i = 0; i < WORKERS; i++) {
		s = atomic_load(&workers[i].started);
		if (s > 0 && t - s >= WEDGE_S && !atomic_exchange(&workers[i].wedged, 1))
			n++;
	}
	return n;
}

static void run_swap(enum mode mode)
{
	int wedged = 0, ops = 0, i;
	double end;

	mu_tree_new(&M);
	mu_write(&M, "a/f", "regular\n");
	mu_mkdir(&M, "b");
	if (!mount_mode(mode))
		skip();
	assert_ok(mkfifo(mu_v(&M, "b/f"), 0644)); /* the agent's FIFO */
	atomic_store(&stop, false);
	memset(workers, 0, sizeof(workers));
	for (i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&workers[i].th, NULL, worker_main, &workers[i]), 0);
	end = now_s() + RACE_MS / 1000.0;
	for (i = 0; now_s() < end; i++) {
		swap_dirs(i);
		if (i % 64 == 0)
			wedged += count_wedged();
	}
	atomic_store(&stop, true);
	/* Give a wedged request WEDGE_S s to show as one, then free it. */
	for (double t = now_s() + WEDGE_S + 0.5; now_s() < t;) {
		usleep(100000);
		wedged += count_wedged();
		bool busy = false;

		for (i = 0; i < WORKERS; i++)
			busy |= atomic_load(&workers[i].started) > 0;
		if (!busy)
			break;
	}
	for (int tries = 0; tries < 100; tries++) {
		unwedge();
		usleep(10000);
	}
	for (i = 0; i < WORKERS; i++) {
		pthread_join(workers[i].th, NULL);
		ops += atomic_load(&workers[i].ops);
	}
	fprintf(stderr, "# %s: %d opens of the regular file, %d wedged\n", mode_opt[mode], ops,
		wedged);
	assert_int_equal(wedged, 0);
	assert_true(ops > 0);
	assert_true(daemon_answers());
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

static void test_swap_plain(void **state)
{
	(void)state;
	run_swap(MODE_PLAIN);
}

static void test_swap_fast_open(void **state)
{
	(void)state;
	run_swap(MODE_FAST);
}

static void test_swap_uring(void **state)
{
	(void)state;
	run_swap(MODE_URING);
}

/* ---------- replaced behind the daemon's back ---------- */

/*
 * In a child: open @rel's old inode (O_PATH fd @pfd, opened before the
 * host replaced it) for reading and read it. Waits at most WEDGE_S s.
 * Returns the errno the open or the read failed with, 0 when both
 * succeeded, -1 when the child hung.
 */
static int open_old_inode(int pfd)
{
	int st, rep[2], err = 0;
	pid_t pid;

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char proc[64], buf[64];
		int fd;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) /* a READ the daemon serves, also with fast_open */
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
			err = errno;
		(void)!write(rep[1], &err, sizeof(err));
		_exit(0);
	}
	close(rep[1]);
	for (int i = 0; i < WEDGE_S * 50; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			assert_int_equal(read(rep[0], &err, sizeof(err)), sizeof(err));
			close(rep[0]);
			return err;
		}
		usleep(20000);
	}
	unwedge();
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(rep[0]);
	return -1;
}

static void run_replaced(enum mode mode)
{
	static const char *const names[] = {"f", "x.pem"};
	int pfd[2], err;

	mu_tree_new(&M);
	mu_write(&M, "f", "regular\n");
	mu_write(&M, "x.pem", cert);
	if (!mount_mode(mode))
		skip();
	for (int i = 0; i < 2; i++) {
		assert_string_equal(mu_slurp(mu_v(&M, names[i])), i ? cert : "regular\n");
		pfd[i] = open(mu_v(&M, names[i]), O_PATH | O_CLOEXEC);
		assert_true(pfd[i] >= 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_ok(unlink(mu_s(&M, names[i])));
		assert_ok(mkfifo(mu_s(&M, names[i]), 0644));
	}
	for (int i = 0; i < 2; i++) {
		err = open_old_inode(pfd[i]);
		if (err != ESTALE && err != ENOENT && err != EIO)
			fail_msg("%s (%s): the open of the replaced file %s", names[i],
				 mode_opt[mode], err < 0 ? "hung" : strerror(err));
		close(pfd[i]);
	}
	assert_true(daemon_answers());
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

static void test_replaced_plain(void **state)
{
	(void)state;
	run_replaced(MODE_PLAIN);
}

static void test_replaced_fast_open(void **state)
{
	(void)state;
	run_replaced(MODE_FAST);
}

static void test_replaced_uring(void **state)
{
	(void)state;
	run_replaced(MODE_URING);
}

static void test_replaced_read_only(void **state)
{
	(void)state;
	run_replaced(MODE_RO);
}

static void test_replaced_audit_all(void **state)
{
	(void)state;
	run_replaced(MODE_AUDIT);
}

/* ---------- the swap by a jailed program ---------- */

/* The agent's side of the swap as a real program in jailrun: it makes the
 * FIFO, exchanges a and b (renameat2) while threads open a/f by its cached
 * inode and read it, then prints "done". */
static const char swap_py[] = "import ctypes, os, stat, threading, time\n"
			      "libc = ctypes.CDLL(None, use_errno=True)\n"
			      "os.makedirs('a', exist_ok=True)\n"
			      "os.makedirs('b', exist_ok=True)\n"
			      "with open('a/f', 'w') as f:\n"
			      "    f.write('regular\\n')\n"
			      "os.mkfifo('b/f')\n"
			      "stop = False\n"
			      "def work():\n"
			      "    while not stop:\n"
			      "        try:\n"
			      "            p = os.open('a/f', os.O_PATH | os.O_NOFOLLOW)\n"
			      "        except OSError:\n"
			      "            continue\n"
			      "        try:\n"
			      "            if stat.S_ISREG(os.fstat(p).st_mode):\n"
			      "                fd = os.open('/proc/self/fd/%d' % p, os.O_RDONLY)\n"
			      "                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n"
			      "                os.pread(fd, 64, 0)\n"
			      "                os.close(fd)\n"
			      "        except OSError:\n"
			      "            pass\n"
			      "        finally:\n"
			      "            os.close(p)\n"
			      "ts = [threading.Thread(target=work) for _ in range(6)]\n"
			      "for t in ts:\n"
			      "    t.start()\n"
			      "end = time.monotonic() + 1.5\n"
			      "while time.monotonic() < end:\n"
			      "    libc.renameat2(-100, b'a', -100, b'b', 2)\n"
			      "stop = True\n"
			      "for t in ts:\n"
			      "    t.join()\n"
			      "print('done')\n";

/*
 * jailrun --source (its one-shot view, fast_open) or, with @root, jailrun
 * --root on root's default mount of the tree: the program finishes well
 * within jailrun's timeout, and says so.
 */
static void run_jailed_swap(bool root)
{
	const char *j = getenv("JAILRUN"), *old = getenv("JF_MOUNT_TMPDIR");
	char out[600];
	pid_t pid;
	int r, st;

	if (geteuid() != 0 || !j)
		skip(); /* root's jailrun (the ordinary user's runs in test-jailrun.sh) */
	setenv("JF_MOUNT_TMPDIR", "/var/tmp", 1); /* jailrun refuses a project in /tmp */
	mu_tree_new(&M);
	if (old)
		setenv("JF_MOUNT_TMPDIR", old, 1);
	else
		unsetenv("JF_MOUNT_TMPDIR");
	mu_write(&M, "swap.py", swap_py);
	snprintf(out, sizeof(out), "%s/out", M.dir);
	if (root && mu_mount(&M, NULL, 0) < 0)
		fail_msg("jailfs did not mount");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mu_sh("cd '%s' && '%s' %s '%s' --timeout 20 -- python3 swap.py >'%s' 2>&1",
			    M.src, j, root ? "--root" : "--source", root ? M.mnt : M.src, out));
	/* A wedged daemon keeps the jailed threads past jailrun's timeout:
	 * from 30 s on, free every reader of the FIFOs until jailrun ends. */
	for (int i = 0; waitpid(pid, &st, WNOHANG) != pid; i++) {
		if (i >= 300)
			unwedge();
		usleep(100000);
	}
	r = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (r != 0 || !strstr(mu_slurp(out), "done"))
		fail_msg("jailrun %s: exit %d: %s", root ? "--root" : "--source", r, mu_slurp(out));
	if (root) {
		assert_true(daemon_answers());
		assert_int_equal(mu_umount(&M, SIGTERM), 0);
	}
	mu_tree_free(&M);
}

static void test_jailrun_source_swap(void **state)
{
	(void)state;
	run_jailed_swap(false);
}

static void test_jailrun_root_swap(void **state)
{
	(void)state;
	run_jailed_swap(true);
}

/* ---------- the agent's own FIFO ---------- */

/*
 * A FIFO made through the view in SAFE works as POSIX says: a blocking open
 * waits for the other end, O_NONBLOCK opens for reading at once and answers
 * ENXIO for writing without a reader, bytes pass. The kernel opens a FIFO
 * itself (FUSE sends no OPEN for it), so the daemon never opens one on the
 * agent's behalf: the OPEN count does not move.
 */
static void run_own_fifo(enum mode mode)
{
	char stats[400], buf[8] = "";
	const char *args[] = {"--stats", stats, "-o", mode_opt[mode], NULL};
	uint64_t before, after;
	pid_t pid;
	int fd, st;

	mu_tree_new(&M);
	mu_mkdir(&M, "w");
	snprintf(stats, sizeof(stats), "%s/stats", M.dir);
	assert_int_equal(mu_mount(&M, args, 0), 0);
	assert_ok(mkfifo(mu_v(&M, "w/p"), 0644));
	assert_int_equal(mu_requests(M.pid, stats, "OPEN", &before), 0);
	assert_errno(open(mu_v(&M, "w/p"), O_WRONLY | O_NONBLOCK | O_CLOEXEC), ENXIO);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int w = open(mu_v(&M, "w/p"), O_WRONLY | O_CLOEXEC); /* waits for the reader */

		_exit(w >= 0 && write(w, "fifo", 4) == 4 ? 0 : 1);
	}
	fd = open(mu_v(&M, "w/p"), O_RDONLY | O_CLOEXEC); /* waits for the writer */
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "fifo", 4);
	close(fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = open(mu_v(&M, "w/p"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mu_requests(M.pid, stats, "OPEN", &after), 0);
	assert_int_equal(after, before);
	assert_int_equal(mu_umount(&M, SIGTERM), 0);
	mu_tree_free(&M);
}

static void test_own_fifo_plain(void **state)
{
	(void)state;
	run_own_fifo(MODE_PLAIN);
}

static void test_own_fifo_fast_open(void **state)
{
	(void)state;
	run_own_fifo(MODE_FAST);
}

/* Also after a failed assertion: no mount, no tree, enable_uring put back. */
static int teardown(void **state)
{
	(void)state;
	if (M.dir[0]) {
		unwedge();
		mu_tree_free(&M);
	}
	memset(&M, 0, sizeof(M));
	uring_restore();
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_own_fifo_plain, teardown),
		cmocka_unit_test_teardown(test_own_fifo_fast_open, teardown),
		cmocka_unit_test_teardown(test_replaced_plain, teardown),
		cmocka_unit_test_teardown(test_replaced_fast_open, teardown),
		cmocka_unit_test_teardown(test_replaced_read_only, teardown),
		cmocka_unit_test_teardown(test_replaced_audit_all, teardown),
		cmocka_unit_test_teardown(test_replaced_uring, teardown),
		cmocka_unit_test_teardown(test_swap_plain, teardown),
		cmocka_unit_test_teardown(test_swap_fast_open, teardown),
		cmocka_unit_test_teardown(test_jailrun_source_swap, teardown),
		cmocka_unit_test_teardown(test_jailrun_root_swap, teardown),
		cmocka_unit_test_teardown(test_swap_uring, teardown),
	};

	return mu_run_tests("race-fifo", tests, argc, argv);
}
