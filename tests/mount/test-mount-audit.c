/* SPDX-License-Identifier: MIT */
/*
 * Mount tests of the audit log: a real jailfs daemon (build's fs/jailfs) on a
 * real temporary tree, real syscalls and real commands through the view; the
 * audit file is read back whole and every line parsed with jansson.
 *   - each op class appears with the right fields (level all);
 *   - level writes leaves reads out;
 *   - -o fast_open at level denied: refusals at the first mutation, recorded;
 *   - SIGHUP after a rename (logrotate) loses and duplicates nothing;
 *   - SIGTERM and fusermount3 -u flush everything queued;
 *   - --audit-sync then SIGKILL: every answered request has its record;
 *   - a hidden name looked up again and again is recorded once (the kernel
 *     caches the negative entry);
 *   - with -o fast_open (no OPEN, no RELEASE) at level all: each decision
 *     kind still recorded, a read and a write once per inode;
 *   - a live log shows a record within the promised 100 ms (tail -f);
 *   - bounds, in each mode: a flood from one process stays under
 *     --audit-rate with exact "suppressed" counts, another process is not
 *     suppressed; --audit-max-size is never exceeded and the "capped"
 *     record counts the rest; a program named "git" is recorded with the
 *     path of its real executable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "io-util.h"
#include "mount-util.h"
#include "test-util.h"

static const char policy_ini[] = "[safe]\n"	  /* 1 */
				 "/\n"		  /* 2 */
				 "[restricted]\n" /* 3 */
				 "docs/\n"	  /* 4 */
				 "[denied]\n"	  /* 5 */
				 "*.secret\n"	  /* 6 */
				 "[options]\n"	  /* 7 */
				 "profiles = secrets, project\n";

static struct jf_mnt M;
static char audit_file[PATH_MAX], policy_file[PATH_MAX];

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Every line of @path as a JSON array of objects; fails on any bad line. */
static json_t *load_records(const char *path)
{
	size_t len;
	char *text = tu_slurp(path, &len), *p = text, *end = text + len;
	json_t *all = json_array();
	size_t line = 0;

	if (len)
		assert_int_equal(end[-1], '\n'); /* no torn last line */
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		json_error_t jerr;
		json_t *o;

		line++;
		o = json_loadb(p, (size_t)(nl - p), 0, &jerr);
		if (!o || !json_is_object(o))
			fail_msg("%s:%zu: not a JSON object: %s: %.*s", path, line, jerr.text,
				 (int)(nl - p), p);
		json_array_append_new(all, o);
		p = nl + 1;
	}
	free(text);
	return all;
}

static const char *sget(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Does @o match every "key=value" of @ap (NULL-terminated; numbers
 * compared as text, "key=" means absent)? */
static bool matches(json_t *o, va_list ap)
{
	const char *kv;

	while ((kv = va_arg(ap, const char *))) {
		const char *eq = strchr(kv, '=');
		char key[64], num[32];
		json_t *v;

		snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
		v = json_object_get(o, key);
		if (!eq[1]) {
			if (v)
				return false;
		} else if (json_is_string(v)) {
			if (strcmp(json_string_value(v), eq + 1) != 0)
				return false;
		} else if (json_is_integer(v)) {
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
			if (strcmp(num, eq + 1) != 0)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

/* The first record matching every "key=value" in the NULL-terminated list
 * (matches()). NULL if none. */
static json_t *find(json_t *all, ...)
{
	size_t i;
	json_t *o;

	json_array_foreach(all, i, o)
	{
		va_list ap;
		bool ok;

		va_start(ap, all);
		ok = matches(o, ap);
		va_end(ap);
		if (ok)
			return o;
	}
	return NULL;
}

/* How many records match every "key=value" in the NULL-terminated list. */
static size_t count(json_t *all, ...)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(all, i, o)
	{
		va_list ap;

		va_start(ap, all);
		n += matches(o, ap);
		va_end(ap);
	}
	return n;
}

static void dump(json_t *all)
{
	size_t i;
	json_t *o;

	json_array_foreach(all, i, o)
	{
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

		print_message("  %s\n", s);
		free(s);
	}
}

#define EXPECT(all, ...)                                                                           \
	do {                                                                                       \
		if (!find(all, __VA_ARGS__, NULL)) {                                               \
			dump(all);                                                                 \
			fail_msg("no record with %s", #__VA_ARGS__);                               \
		}                                                                                  \
	} while (0)

static void tree(void)
{
	FILE *f;

	mu_tree_new(&M);
	mu_write(&M, "src/main.c", "int main(void) { return 0; }\n"); /* 29 bytes */
	mu_write(&M, "docs/guide.md", "guide\n");
	mu_write(&M, ".env", "TOKEN=1\n");
	mu_write(&M, "keys/a.secret", "s\n");
	mu_write(&M, ".git/config", "[core]\n");
	snprintf(audit_file, sizeof(audit_file), "%s/audit.jsonl", M.dir);
	snprintf(policy_file, sizeof(policy_file), "%s/policy.ini", M.dir);
	f = fopen(policy_file, "we");
	assert_non_null(f);
	fputs(policy_ini, f);
	fclose(f);
}

/* Mount with "--policy policy.ini" given relative to the tree's directory, so
 * rules print as "policy.ini:N" (jailfs -f does not change directory). */
static void mount_with(const char *const *extra)
{
	const char *args[16] = {"--policy", "policy.ini", "--audit", audit_file};
	int n = 4, r;
	char cwd[PATH_MAX];

	for (; extra && *extra; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(M.dir), 0);
	r = mu_mount(&M, args, 0);
	assert_int_equal(chdir(cwd), 0); /* first: a failure must not leave us in the tree */
	assert_int_equal(r, 0);
}

static int stop_daemon(int sig)
{
	int status = mu_umount(&M, sig);

	return status;
}

/* Run @argv (a real program), return its pid after it exited. */
static pid_t run(const char *const *argv)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

/* Output of a shell command (the first 64 KiB). Caller frees. */
static char *sh_out(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *out = calloc(1, 65536);
	size_t n;

	assert_non_null(p);
	n = fread(out, 1, 65535, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	return out;
}

/* The jq recipes of README "## Audit log", run as written on a real log. */
static void readme_jq_recipes(const char *catpid)
{
	char cmd[PATH_MAX * 2], want[128];
	char *out;

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && jq -r 'select(.decision == \"hide\") | \"\\(.comm) (pid "
		 "\\(.pid))\\t\\(.rule)\\t\\(.path)\"' audit.jsonl | sort | uniq -c | sort -rn",
		 M.dir);
	out = sh_out(cmd);
	snprintf(want, sizeof(want), "      1 cat (pid %s)\tpolicy.ini:6\tkeys/a.secret\n", catpid);
	if (!strstr(out, want))
		fail_msg("secrets recipe: want '%s' in:\n%s", want, out);
	free(out);

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && jq -c 'select(.decision == \"deny\") | {ts, op, path, errno, rule, "
		 "comm}' audit.jsonl",
		 M.dir);
	out = sh_out(cmd);
	assert_non_null(strstr(out, "\"op\":\"unlink\",\"path\":\"docs/guide.md\",\"errno\":"
				    "\"EROFS\",\"rule\":\"policy.ini:4\""));
	free(out);

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && jq -r 'select(.op == \"release\" and .bytes_written > 0) | "
		 "[.bytes_written, .path] | @tsv' audit.jsonl",
		 M.dir);
	out = sh_out(cmd);
	assert_string_equal(out, "5\tsrc/new.txt\n");
	free(out);

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && jq -s '[.[] | select(.op == \"dropped\") | .count] | add' audit.jsonl",
		 M.dir);
	out = sh_out(cmd);
	assert_string_equal(out, "null\n");
	free(out);
}

static void test_op_classes(void **state)
{
	/* opens seen: records at open and release, refusals at open */
	const char *all_level[] = {"-o", "nofast_open", "--audit-level", "all", NULL};
	char buf[256], mypid[32], catpid[32], myuid[32];
	struct stat st;
	json_t *all, *o;
	DIR *d;
	int fd;

	tree();
	mount_with(all_level);
	snprintf(mypid, sizeof(mypid), "pid=%d", (int)getpid());
	snprintf(myuid, sizeof(myuid), "uid=%u", (unsigned)getuid());

	/* hidden lookup, by us and by a real cat */
	assert_int_equal(stat(mu_v(&M, ".env"), &st), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(catpid, sizeof(catpid), "pid=%d",
		 (int)run((const char *[]){"/bin/cat", mu_v(&M, "keys/a.secret"), NULL}));
	/* a refused name: the reason is the rule */
	assert_int_equal(stat(mu_v(&M, "%2e%2e"), &st), -1);
	/* read a file: lookup, open, release with bytes_read */
	fd = open(mu_v(&M, "src/main.c"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 29);
	close(fd);
	/* create and write: create, release with bytes_written */
	fd = open(mu_v(&M, "src/new.txt"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	close(fd);
	assert_int_equal(rename(mu_v(&M, "src/new.txt"), mu_v(&M, "src/renamed.txt")), 0);
	assert_int_equal(mkdir(mu_v(&M, "src/d"), 0755), 0);
	assert_int_equal(rmdir(mu_v(&M, "src/d")), 0);
	assert_int_equal(chmod(mu_v(&M, "src/main.c"), 0600), 0);
	/* refusals: RESTRICTED and DENIED */
	assert_int_equal(unlink(mu_v(&M, "docs/guide.md")), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(mu_v(&M, "docs/guide.md"), O_WRONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(unlink(mu_v(&M, ".git/config")), -1);
	assert_int_equal(open(mu_v(&M, "id_rsa"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600), -1);
	assert_int_equal(errno, EACCES);
	/* readdir of the root and of src */
	d = opendir(M.mnt);
	assert_non_null(d);
	while (readdir(d))
		;
	closedir(d);
	d = opendir(mu_v(&M, "src"));
	assert_non_null(d);
	while (readdir(d))
		;
	closedir(d);
	sleep_ms(200); /* releases are sent by the kernel in the background */
	assert_int_equal(stat(mu_v(&M, "src/renamed.txt"), &st), 0);
	stop_daemon(SIGTERM);

	all = load_records(audit_file);
	EXPECT(all, "op=lookup", "path=.env", "zone=DENIED", "decision=hide", "errno=ENOENT",
	       "rule=profile:secrets", mypid, myuid);
	EXPECT(all, "op=lookup", "path=keys/a.secret", "zone=DENIED", "decision=hide",
	       "errno=ENOENT", "rule=policy.ini:6", catpid, "comm=cat");
	EXPECT(all, "op=lookup", "path=keys", "zone=SAFE", "decision=allow",
	       "errno=", "rule=policy.ini:2", catpid, "comm=cat");
	EXPECT(all, "op=lookup", "path=%2e%2e", "decision=hide", "rule=encoded", mypid);
	EXPECT(all, "op=open", "path=src/main.c", "zone=SAFE", "decision=allow",
	       "errno=", "rule=policy.ini:2", mypid);
	EXPECT(all, "op=release", "path=src/main.c", "decision=allow", "bytes_read=29",
	       "bytes_written=0");
	EXPECT(all, "op=create", "path=src/new.txt", "zone=SAFE", "decision=allow", mypid);
	EXPECT(all, "op=release", "path=src/new.txt", "bytes_read=0", "bytes_written=5");
	EXPECT(all, "op=rename", "path=src/new.txt", "path2=src/renamed.txt", "decision=allow",
	       mypid);
	EXPECT(all, "op=mkdir", "path=src/d", "decision=allow");
	EXPECT(all, "op=rmdir", "path=src/d", "decision=allow");
	EXPECT(all, "op=chmod", "path=src/main.c", "decision=allow");
	EXPECT(all, "op=unlink", "path=docs/guide.md", "zone=RESTRICTED", "decision=deny",
	       "errno=EROFS", "rule=policy.ini:4", mypid);
	EXPECT(all, "op=open", "path=docs/guide.md", "zone=RESTRICTED", "decision=deny",
	       "errno=EROFS", "rule=policy.ini:4");
	EXPECT(all, "op=unlink", "path=.git/config", "zone=RESTRICTED", "decision=deny",
	       "errno=EROFS", "rule=profile:project");
	EXPECT(all, "op=create", "path=id_rsa", "zone=DENIED", "decision=deny", "errno=EACCES",
	       "rule=profile:secrets");
	EXPECT(all, "op=readdir", "path=.", "decision=allow");
	EXPECT(all, "op=readdir", "path=src", "decision=allow");
	/* Every record has the fields every record must have, ts in shape. */
	{
		size_t i;

		json_array_foreach(all, i, o)
		{
			const char *ts = sget(o, "ts");

			assert_non_null(ts);
			assert_int_equal(strlen(ts), 27);
			assert_true(ts[4] == '-' && ts[10] == 'T' && ts[19] == '.' &&
				    ts[26] == 'Z');
			assert_non_null(sget(o, "op"));
			assert_non_null(sget(o, "path"));
			assert_non_null(sget(o, "zone"));
			assert_non_null(sget(o, "decision"));
			assert_non_null(sget(o, "rule"));
			assert_true(json_is_integer(json_object_get(o, "pid")));
			assert_true(json_is_integer(json_object_get(o, "uid")));
		}
	}
	/* The DENIED file's contents never appear; no record of .env allowed. */
	assert_null(find(all, "path=.env", "decision=allow", NULL));
	json_decref(all);
	readme_jq_recipes(catpid + 4);
	mu_tree_free(&M);
}

/* Level writes: mutations and refusals, no reads. */
static void test_level_writes(void **state)
{
	const char *writes[] = {"--audit-level", "writes", NULL};
	char buf[64];
	struct stat st;
	json_t *all;
	int fd;

	tree();
	mount_with(writes);
	fd = open(mu_v(&M, "src/main.c"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf)) > 0);
	close(fd);
	assert_int_equal(stat(mu_v(&M, ".env"), &st), -1);
	fd = open(mu_v(&M, "out.txt"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	sleep_ms(200);
	stop_daemon(SIGTERM);

	all = load_records(audit_file);
	EXPECT(all, "op=lookup", "path=.env", "decision=hide");
	EXPECT(all, "op=create", "path=out.txt", "decision=allow");
	EXPECT(all, "op=release", "path=out.txt", "bytes_written=3");
	assert_null(find(all, "path=src/main.c", NULL));
	assert_null(find(all, "op=lookup", "decision=allow", NULL));
	assert_null(find(all, "op=readdir", NULL));
	json_decref(all);
	mu_tree_free(&M);
}

/*
 * -o fast_open with a log of refusals (level denied, as jailrun's views):
 * the kernel opens files without the daemon, so a write open of a
 * RESTRICTED file succeeds, and each mutation through it is refused when it
 * reaches the daemon, with a deny record naming the path and the rule; so
 * are reads and writes of a file over max_file_size (EFBIG). No open is
 * recorded, and SOURCE is unchanged.
 */
static void test_fast_open_refusals(void **state)
{
	const char *fast[] = {"-o", "fast_open", NULL};
	struct timespec ts[2] = {{1, 0}, {2, 0}};
	char big[2048], buf[16], mypid[32];
	uint64_t before;
	json_t *all;
	FILE *f;
	int fd;

	tree();
	f = fopen(policy_file, "ae"); /* line 9 on: the limit of src/big */
	assert_non_null(f);
	fputs("[limits]\nsafe.max_file_size = 1K\n", f);
	fclose(f);
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mu_write(&M, "src/big", big);
	before = mu_tree_sum(&M, NULL);
	mount_with(fast);
	snprintf(mypid, sizeof(mypid), "pid=%d", (int)getpid());
	fd = open(mu_v(&M, "docs/guide.md"), O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(fallocate(fd, 0, 0, 4096), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(fchmod(fd, 0600), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(futimens(fd, ts), -1);
	assert_int_equal(errno, EROFS);
	close(fd);
	assert_int_equal(open(mu_v(&M, ".git/config"), O_WRONLY | O_TRUNC | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	fd = open(mu_v(&M, "src/big"), O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EFBIG);
	close(fd);
	stop_daemon(SIGTERM);

	all = load_records(audit_file);
	EXPECT(all, "op=write", "path=docs/guide.md", "zone=RESTRICTED", "decision=deny",
	       "errno=EROFS", "rule=policy.ini:4", mypid);
	EXPECT(all, "op=truncate", "path=docs/guide.md", "decision=deny", "errno=EROFS",
	       "rule=policy.ini:4");
	EXPECT(all, "op=fallocate", "path=docs/guide.md", "decision=deny", "errno=EROFS");
	EXPECT(all, "op=chmod", "path=docs/guide.md", "decision=deny", "errno=EROFS");
	EXPECT(all, "op=utimens", "path=docs/guide.md", "decision=deny", "errno=EROFS");
	EXPECT(all, "op=truncate", "path=.git/config", "zone=RESTRICTED", "decision=deny",
	       "errno=EROFS", "rule=profile:project");
	EXPECT(all, "op=read", "path=src/big", "zone=SAFE", "decision=deny", "errno=EFBIG",
	       "rule=policy.ini:2", mypid);
	EXPECT(all, "op=write", "path=src/big", "zone=SAFE", "decision=deny", "errno=EFBIG");
	assert_null(find(all, "op=open", NULL));
	assert_null(find(all, "decision=allow", NULL));
	json_decref(all);
	assert_true(mu_tree_sum(&M, NULL) == before);
	mu_tree_free(&M);
}

/* RESTRICTED docs/<name>, 12 KiB of 'd', for one refused mutation each. */
static const char *const victims[] = {
	"write",    "bigwrite", "direct", "writev",   "append", "uring", "aio",
	"sendfile", "splice",	"cfr",	  "falloc",   "punch",	"trunc", "otrunc",
	"chmod",    "chown",	"utimes", "setxattr", "mmap",	NULL,
};

/* An fd of docs/@name opened read-write (no OPEN reaches the daemon). */
static int victim(const char *name, int flags)
{
	char rel[64];
	int fd;

	snprintf(rel, sizeof(rel), "docs/%s", name);
	fd = open(mu_v(&M, rel), flags | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* The mutation of docs/@name, which must fail with EROFS. */
static void mutate(const char *name)
{
	static char big[3 << 20];
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	int fd = victim(name, strcmp(name, "direct") ? O_RDWR : O_RDWR | O_DIRECT);
	int src = open(mu_v(&M, "src/main.c"), O_RDONLY | O_CLOEXEC), p[2];
	off_t off = 0;
	long r = -EINVAL;
	char *map;

	assert_true(src >= 0);
	errno = 0;
	if (!strcmp(name, "write"))
		r = write(fd, "x", 1);
	else if (!strcmp(name, "bigwrite")) /* three max_write requests' worth */
		r = write(fd, big, sizeof(big));
	else if (!strcmp(name, "direct")) /* two requests' worth, uncached */
		r = pwrite(fd, big + 4096 - ((uintptr_t)big & 4095), 2 << 20, 0);
	else if (!strcmp(name, "writev"))
		r = writev(fd, iov, 2);
	else if (!strcmp(name, "append"))
		r = pwritev2(fd, iov, 2, 0, RWF_APPEND);
	else if (!strcmp(name, "uring"))
		r = iu_uring_write(fd, "u", 1, 0, false);
	else if (!strcmp(name, "aio"))
		r = iu_aio_write(fd, "a", 1, 0);
	else if (!strcmp(name, "sendfile"))
		r = sendfile(fd, src, &off, 8);
	else if (!strcmp(name, "splice") && pipe(p) == 0) {
		assert_int_equal(write(p[1], "pipe", 4), 4);
		r = splice(p[0], NULL, fd, &off, 4, 0);
		close(p[0]);
		close(p[1]);
	} else if (!strcmp(name, "cfr"))
		r = copy_file_range(src, &off, fd, NULL, 8, 0);
	else if (!strcmp(name, "falloc"))
		r = fallocate(fd, 0, 0, 1 << 20);
	else if (!strcmp(name, "punch"))
		r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
	else if (!strcmp(name, "trunc"))
		r = ftruncate(fd, 0);
	else if (!strcmp(name, "otrunc"))
		r = open(mu_v(&M, "docs/otrunc"), O_WRONLY | O_TRUNC | O_CLOEXEC);
	else if (!strcmp(name, "chmod"))
		r = fchmod(fd, 0600);
	else if (!strcmp(name, "chown"))
		r = fchown(fd, 1, 1);
	else if (!strcmp(name, "utimes"))
		r = futimens(fd, NULL);
	else if (!strcmp(name, "setxattr"))
		r = fsetxattr(fd, "user.x", "1", 1, 0);
	else if (!strcmp(name, "mmap")) { /* two adjacent pages, one msync */
		map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(map != MAP_FAILED);
		memset(map, 'M', 8192);
		r = msync(map, 8192, MS_SYNC);
		munmap(map, 8192);
	}
	if (r >= 0 || (r == -1 ? errno : -r) != EROFS)
		fail_msg("%s of docs/%s: expected EROFS, got %ld (%s)", name, name, r,
			 strerror(r == -1 ? errno : (int)-r));
	close(src);
	close(fd);
}

/*
 * -o fast_open at level denied (jailrun's views): every refused mutation,
 * whichever system call makes it, is recorded exactly once, with the path
 * and the rule, however many requests the kernel splits it into (a 3 MiB
 * write, a 2 MiB O_DIRECT write, two pages of a mapping written back);
 * the files in SOURCE are unchanged.
 */
static void test_fast_open_one_record_each(void **state)
{
	const char *fast[] = {"-o", "fast_open", NULL};
	char data[12288 + 1], rel[64], path[80];
	uint64_t before;
	json_t *all;

	(void)state;
	tree();
	memset(data, 'd', sizeof(data) - 1);
	data[sizeof(data) - 1] = '\0';
	for (int i = 0; victims[i]; i++) {
		snprintf(rel, sizeof(rel), "docs/%s", victims[i]);
		mu_write(&M, rel, data);
	}
	before = mu_tree_sum(&M, NULL);
	mount_with(fast);
	for (int i = 0; victims[i]; i++)
		mutate(victims[i]);
	stop_daemon(SIGTERM);
	all = load_records(audit_file);
	for (int i = 0; victims[i]; i++) {
		size_t n;

		snprintf(path, sizeof(path), "path=docs/%s", victims[i]);
		n = count(all, path, NULL);
		if (n != 1 || count(all, path, "decision=deny", "errno=EROFS", "zone=RESTRICTED",
				    "rule=policy.ini:4", NULL) != 1) {
			dump(all);
			fail_msg("%zu records for docs/%s, want one deny", n, victims[i]);
		}
	}
	json_decref(all);
	assert_true(mu_tree_sum(&M, NULL) == before);
	mu_tree_free(&M);
}

/*
 * Refusals of SAFE src/edge (at safe.max_file_size, 1K) for its size, with
 * and without fast_open: a write, an ftruncate, a fallocate and a
 * copy_file_range past the limit each answer EFBIG with one deny record
 * (the copy's is a write's).
 */
static void test_size_refusals_recorded(void **state)
{
	const char *modes[2][3] = {{"-o", "fast_open", NULL}, {"-o", "nofast_open", NULL}};
	static const char *const ops[] = {"truncate", "fallocate"};
	char edge[1024 + 1];

	(void)state;
	memset(edge, 'e', sizeof(edge) - 1);
	edge[sizeof(edge) - 1] = '\0';
	for (int mode = 0; mode < 2; mode++) {
		off_t off = 1024;
		json_t *all;
		FILE *f;
		int fd, src;

		tree();
		f = fopen(policy_file, "ae");
		assert_non_null(f);
		fputs("[limits]\nsafe.max_file_size = 1K\n", f);
		fclose(f);
		mu_write(&M, "src/edge", edge);
		mount_with(modes[mode]);
		fd = open(mu_v(&M, "src/edge"), O_RDWR | O_APPEND | O_CLOEXEC);
		src = open(mu_v(&M, "src/main.c"), O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0 && src >= 0);
		assert_errno(write(fd, "x", 1), EFBIG);
		assert_errno(ftruncate(fd, 2048), EFBIG);
		assert_errno(fallocate(fd, 0, 0, 2048), EFBIG);
		close(fd);
		fd = open(mu_v(&M, "src/edge"), O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_errno(copy_file_range(src, NULL, fd, &off, 8, 0), EFBIG);
		close(fd);
		close(src);
		stop_daemon(SIGTERM);
		all = load_records(audit_file);
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			char op[64];

			snprintf(op, sizeof(op), "op=%s", ops[i]);
			if (count(all, op, "path=src/edge", "decision=deny", "errno=EFBIG",
				  "rule=policy.ini:2", NULL) != 1) {
				dump(all);
				fail_msg("%s: want one EFBIG record of %s", modes[mode][1], ops[i]);
			}
		}
		/* write(2) and copy_file_range(2) are both writes */
		if (count(all, "op=write", "path=src/edge", "decision=deny", "errno=EFBIG",
			  "rule=policy.ini:2", NULL) != 2) {
			dump(all);
			fail_msg("%s: want two EFBIG records of writes", modes[mode][1]);
		}
		assert_int_equal(count(all, "path=src/edge", NULL), 4);
		json_decref(all);
		assert_string_equal(mu_slurp(mu_s(&M, "src/edge")), edge);
		mu_tree_free(&M);
	}
}

/* Create h0.secret .. h<n-1>.secret in SOURCE: only names that exist are
 * "hidden" (a lookup of an absent name is a plain ENOENT, not a decision). */
static void make_hidden(int n)
{
	char name[64];

	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(name, sizeof(name), "h%d.secret", i);
		fd = open(mu_s(&M, name), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
}

/* @n hidden lookups of distinct names "h<from..from+n>.secret". */
static void hidden_lookups(int from, int n)
{
	char name[64];
	struct stat st;

	for (int i = from; i < from + n; i++) {
		snprintf(name, sizeof(name), "h%d.secret", i);
		assert_int_equal(stat(mu_v(&M, name), &st), -1);
	}
}

/* Count each h<i>.secret lookup found in @path into @seen[i]. */
static size_t count_hidden(const char *path, int *seen, int n, int lo, int hi)
{
	json_t *all = load_records(path), *o;
	size_t i, count = 0;
	int k;

	json_array_foreach(all, i, o)
	{
		const char *p = sget(o, "path");

		if (!p || sscanf(p, "h%d.secret", &k) != 1)
			continue;
		assert_true(k >= 0 && k < n);
		if (k < lo || k >= hi)
			fail_msg("%s holds h%d.secret, expected only %d..%d", path, k, lo, hi - 1);
		seen[k]++;
		count++;
	}
	json_decref(all);
	return count;
}

static void wait_exists(const char *path)
{
	for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++)
		sleep_ms(10);
	assert_int_equal(access(path, F_OK), 0);
}

/* Until @path holds @n complete lines (10 s at most). */
static void wait_lines(const char *path, size_t n)
{
	size_t lines = 0;

	for (int i = 0; i < 1000; i++) {
		size_t len;
		char *text = tu_slurp(path, &len);

		lines = 0;
		for (size_t k = 0; k < len; k++)
			lines += text[k] == '\n';
		free(text);
		if (lines >= n)
			return;
		sleep_ms(10);
	}
	fail_msg("%s: %zu lines after 10 s, expected %zu", path, lines, n);
}

/* logrotate: rename, SIGHUP, twice, while lookups go on. Nothing lost, none twice. */
static void test_sighup_rotation(void **state)
{
	enum { N = 3000 };
	char f1[PATH_MAX + 4], f2[PATH_MAX + 4];
	int *seen = calloc(N, sizeof(int));

	tree();
	make_hidden(N);
	mount_with(NULL); /* level denied */
	snprintf(f1, sizeof(f1), "%s.1", audit_file);
	snprintf(f2, sizeof(f2), "%s.2", audit_file);
	hidden_lookups(0, N / 3);
	wait_lines(audit_file, N / 3); /* all written before the rename */
	assert_int_equal(rename(audit_file, f2), 0);
	kill(M.pid, SIGHUP);
	wait_exists(audit_file); /* the writer reopened */
	hidden_lookups(N / 3, N / 3);
	wait_lines(audit_file, N / 3);
	assert_int_equal(rename(audit_file, f1), 0);
	kill(M.pid, SIGHUP);
	wait_exists(audit_file);
	hidden_lookups(2 * N / 3, N / 3);
	stop_daemon(SIGTERM);

	assert_int_equal(count_hidden(f2, seen, N, 0, N / 3), N / 3);
	assert_int_equal(count_hidden(f1, seen, N, N / 3, 2 * N / 3), N / 3);
	assert_int_equal(count_hidden(audit_file, seen, N, 2 * N / 3, N), N / 3);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	mu_tree_free(&M);
}

/* A burst right before SIGTERM, or before fusermount3 -u: all of it is on disk. */
static void flush_on_exit(bool by_unmount, bool fast_open)
{
	enum { N = 5000 };
	const char *all_level[] = {"--audit-level", "all", NULL};
	const char *fast_all[] = {"-o", "fast_open", "--audit-level", "all", NULL};
	int *seen = calloc(N, sizeof(int)), status;

	tree();
	make_hidden(N);
	mount_with(fast_open ? fast_all : all_level);
	hidden_lookups(0, N);
	if (by_unmount) {
		assert_int_equal(mu_sh("fusermount3 -u '%s'", M.mnt), 0);
		assert_int_equal(waitpid(M.pid, &status, 0), M.pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		M.pid = 0;
		M.mounted = false;
	} else {
		status = stop_daemon(SIGTERM);
		assert_true(WIFEXITED(status));
	}
	assert_int_equal(count_hidden(audit_file, seen, N, 0, N), N);
	free(seen);
	mu_tree_free(&M);
}

static void test_sigterm_flushes(void **state)
{
	flush_on_exit(false, false);
}

static void test_unmount_flushes(void **state)
{
	flush_on_exit(true, false);
}

static void test_sigterm_flushes_fast_open(void **state)
{
	flush_on_exit(false, true);
}

/* --audit-sync: each stat() returned after its record was written; SIGKILL
 * then loses none of them. */
static void test_sync_sigkill(void **state)
{
	enum { N = 2000 };
	const char *sync[] = {"--audit-sync", NULL};
	int *seen = calloc(N, sizeof(int));

	tree();
	make_hidden(N);
	mount_with(sync);
	hidden_lookups(0, N);
	stop_daemon(SIGKILL);
	assert_int_equal(count_hidden(audit_file, seen, N, 0, N), N);
	free(seen);
	mu_tree_free(&M);
}

static void test_audit_report_on_real_log(void **state)
{
	/* opens seen: the release record counts the bytes written */
	const char *all_level[] = {"-o", "nofast_open", "--audit-level", "all", NULL};
	const char *jailfs = getenv("JAILFS");
	char cmd[PATH_MAX * 2], out[8192];
	size_t n;
	FILE *p;
	int fd;

	tree();
	make_hidden(7);
	mount_with(all_level);
	hidden_lookups(0, 7);
	fd = open(mu_v(&M, "w.bin"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	sleep_ms(200);
	stop_daemon(SIGTERM);
	snprintf(cmd, sizeof(cmd), "'%s' --audit-report '%s'", jailfs, audit_file);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "bad lines: 0\n"));
	assert_non_null(strstr(out, "torn last line: no\n"));
	assert_non_null(strstr(out, "      7  policy.ini:6\n"));
	assert_non_null(strstr(out, "      1          10  w.bin\n"));
	mu_tree_free(&M);
}

/* The same hidden name, again and again: the kernel keeps the negative entry
 * (negative_timeout), so the daemon sees and records the first lookup only. */
static void test_hidden_recorded_once(void **state)
{
	const char *all_level[] = {"--audit-level", "all", NULL};
	struct stat st;
	json_t *all;

	tree();
	mount_with(all_level);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(stat(mu_v(&M, ".env"), &st), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(stat(mu_v(&M, "keys/a.secret"), &st), -1);
	stop_daemon(SIGTERM);

	all = load_records(audit_file);
	EXPECT(all, "op=lookup", "path=.env", "decision=hide", "rule=profile:secrets");
	assert_int_equal(count(all, "op=lookup", "path=.env", "decision=hide", NULL), 1);
	assert_int_equal(count(all, "op=lookup", "path=keys/a.secret", "decision=hide", NULL), 1);
	json_decref(all);
	assert_int_equal(access(mu_s(&M, ".env"), F_OK), 0); /* hidden, not gone */
	mu_tree_free(&M);
}

/* Read @rel through the view with a real cat. */
static void cat_view(const char *rel)
{
	run((const char *[]){"/bin/cat", mu_v(&M, rel), NULL});
}

/*
 * -o fast_open at level all: no OPEN or RELEASE reaches the daemon, and each
 * decision kind is still recorded; a file read by two processes has one
 * "read" record, a file written through two opens one "write" record.
 */
static void test_fast_open_level_all(void **state)
{
	const char *fast_all[] = {"-o", "fast_open", "--audit-level", "all", NULL};
	char buf[64];
	struct stat st;
	json_t *all;
	DIR *d;
	int fd;

	tree();
	mount_with(fast_all);
	assert_int_equal(stat(mu_v(&M, ".env"), &st), -1);
	cat_view("src/main.c");
	cat_view("src/main.c");
	for (int i = 0; i < 2; i++) {
		fd = open(mu_v(&M, "src/main.c"), O_WRONLY | O_APPEND | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "//\n", 3), 3);
		close(fd);
	}
	fd = open(mu_v(&M, "src/new.txt"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	close(fd);
	d = opendir(mu_v(&M, "src"));
	assert_non_null(d);
	while (readdir(d))
		;
	closedir(d);
	assert_int_equal(unlink(mu_v(&M, "docs/guide.md")), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(mu_v(&M, "id_rsa"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600), -1);
	assert_int_equal(errno, EACCES);
	fd = open(mu_v(&M, "docs/guide.md"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 6);
	close(fd);
	stop_daemon(SIGTERM);

	all = load_records(audit_file);
	EXPECT(all, "op=lookup", "path=.env", "decision=hide", "errno=ENOENT");
	EXPECT(all, "op=lookup", "path=src", "decision=allow", "zone=SAFE");
	EXPECT(all, "op=read", "path=src/main.c", "zone=SAFE", "decision=allow",
	       "rule=policy.ini:2", "comm=cat", "bytes_read=");
	assert_int_equal(count(all, "op=read", "path=src/main.c", "decision=allow", NULL), 1);
	EXPECT(all, "op=write", "path=src/main.c", "zone=SAFE", "decision=allow");
	assert_int_equal(count(all, "op=write", "path=src/main.c", "decision=allow", NULL), 1);
	EXPECT(all, "op=read", "path=docs/guide.md", "zone=RESTRICTED", "rule=policy.ini:4");
	EXPECT(all, "op=create", "path=src/new.txt", "decision=allow");
	EXPECT(all, "op=readdir", "path=src", "decision=allow");
	EXPECT(all, "op=unlink", "path=docs/guide.md", "decision=deny", "errno=EROFS");
	EXPECT(all, "op=create", "path=id_rsa", "decision=deny", "errno=EACCES");
	/* no_open: neither opens nor releases reach the daemon */
	assert_null(find(all, "op=open", NULL));
	assert_null(find(all, "op=release", NULL));
	json_decref(all);
	assert_int_equal(access(mu_s(&M, "docs/guide.md"), F_OK), 0);
	assert_int_equal(access(mu_s(&M, "id_rsa"), F_OK), -1);
	mu_tree_free(&M);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A live log: tail -f shows the record of a lookup within 100 ms (the
 * writer's promise, docs/audit.md), while the daemon keeps running. */
static void test_live_log_window(void **state)
{
	const char *all_level[] = {"--audit-level", "all", NULL};
	char cmd[PATH_MAX + 64], line[4096];
	struct stat st;
	double t0;
	FILE *tail;

	tree();
	make_hidden(1);
	mount_with(all_level);
	assert_int_equal(stat(M.mnt, &st), 0);
	snprintf(cmd, sizeof(cmd), "exec tail -n 0 -f '%s'", audit_file);
	tail = popen(cmd, "r");
	assert_non_null(tail);
	sleep_ms(300); /* tail is following the file */
	t0 = now_s();
	assert_int_equal(stat(mu_v(&M, "h0.secret"), &st), -1);
	assert_non_null(fgets(line, sizeof(line), tail));
	print_message("record seen by tail -f after %.1f ms\n", (now_s() - t0) * 1000);
	assert_true(now_s() - t0 < 0.100);
	assert_non_null(strstr(line, "\"path\":\"h0.secret\""));
	assert_int_equal(kill(M.pid, 0), 0); /* still serving: no exit flush */
	stop_daemon(SIGTERM);
	pclose(tail);
	mu_tree_free(&M);
}

/* ---- bounds: the rate per process, the size cap; the executable ---- */

/* The audit modes the bounds apply in: levels all and writes (every open
 * reaches the daemon), fast_open at level all and at the default level, and
 * a --read-only view (jailfs refuses each write itself). */
static const char *const bound_modes[][5] = {
	{"--audit-level", "all", NULL},
	{"--audit-level", "writes", NULL},
	{"-o", "fast_open", "--audit-level", "all", NULL},
	{"-o", "fast_open", NULL},
	{"--read-only", NULL},
};

/* Mount with the mode @m and the extra arguments @a, @b (or NULL). */
static void mount_mode(int m, const char *a, const char *b)
{
	const char *args[8];
	int n = 0;

	for (const char *const *p = bound_modes[m]; *p; p++)
		args[n++] = *p;
	if (a) {
		args[n++] = a;
		args[n++] = b;
	}
	args[n] = NULL;
	mount_with(args);
}

/* A child process that looks up @n distinct hidden (absent, *.secret) names
 * "@tag<i>.secret" after @delay_ms; returns at once with its pid. */
static pid_t flood_start(const char *tag, int n, long delay_ms)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char name[64];
		struct stat st;

		sleep_ms(delay_ms);
		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s%d.secret", tag, i);
			if (stat(mu_v(&M, name), &st) == 0)
				_exit(1);
		}
		_exit(0);
	}
	return pid;
}

static void flood_wait(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static json_int_t nget(json_t *o, const char *path1, const char *path2)
{
	json_t *v = json_object_get(o, path1);

	if (path2)
		v = json_object_get(v, path2);
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* Hidden lookups of pid @pid: written as records, and counted in its
 * "suppressed" records (*@summaries of them). */
static void hidden_of(json_t *all, pid_t pid, size_t *records, json_int_t *suppressed,
		      size_t *summaries)
{
	size_t i;
	json_t *o;

	*records = 0;
	*suppressed = 0;
	*summaries = 0;
	json_array_foreach(all, i, o)
	{
		if (nget(o, "pid", NULL) != pid)
			continue;
		if (strcmp(sget(o, "op"), "suppressed") == 0) {
			assert_int_equal(nget(o, "count", NULL),
					 nget(o, "by_decision", "allow") +
						 nget(o, "by_decision", "deny") +
						 nget(o, "by_decision", "hide"));
			assert_non_null(sget(o, "since"));
			assert_non_null(sget(o, "until"));
			assert_true(strcmp(sget(o, "since"), sget(o, "until")) <= 0);
			*suppressed += nget(o, "by_decision", "hide");
			(*summaries)++;
		} else if (sget(o, "decision") && strcmp(sget(o, "decision"), "hide") == 0) {
			(*records)++;
		}
	}
}

/*
 * A flood of hidden lookups from one process, --audit-rate 50: at most a
 * second's worth plus the refill is written, and its "suppressed" records
 * count exactly the rest; another process looking up names in the same
 * window is not suppressed (the limit is per process). Every mode.
 */
static void test_rate_per_process(void **state)
{
	enum { FLOOD = 600, OTHER = 20, RATE = 50 };

	for (int m = 0; m < (int)(sizeof(bound_modes) / sizeof(bound_modes[0])); m++) {
		size_t rec, sums;
		json_int_t supp;
		struct timespec t0, t1;
		pid_t a, b;
		json_t *all;
		double secs;

		tree();
		mount_mode(m, "--audit-rate", "50/s");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		a = flood_start("f", FLOOD, 0);
		b = flood_start("o", OTHER, 5);
		flood_wait(a);
		flood_wait(b);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		stop_daemon(SIGTERM);

		all = load_records(audit_file);
		hidden_of(all, a, &rec, &supp, &sums);
		print_message("mode %d: flood of %d in %.3f s: %zu written, %lld suppressed in "
			      "%zu records\n",
			      m, FLOOD, secs, rec, (long long)supp, sums);
		assert_true(sums >= 1);
		assert_int_equal(rec + (size_t)supp, FLOOD);
		assert_true((double)rec <= RATE + RATE * secs + 1);
		hidden_of(all, b, &rec, &supp, &sums);
		assert_int_equal(rec, OTHER);
		assert_int_equal(sums, 0);
		json_decref(all);
		mu_tree_free(&M);
	}
}

/* The last record of @all. */
static json_t *last_record(json_t *all)
{
	return json_array_get(all, json_array_size(all) - 1);
}

/*
 * --audit-max-size 16K and a flood of hidden lookups: the file never exceeds
 * 16 KiB; its last record is "capped", and its count plus the hidden
 * records written equal the lookups made (no silent loss). Every mode.
 */
static void test_size_cap(void **state)
{
	enum { FLOOD = 1500, CAP = 16384 };

	for (int m = 0; m < (int)(sizeof(bound_modes) / sizeof(bound_modes[0])); m++) {
		size_t rec, sums;
		json_int_t supp;
		struct stat st;
		json_t *all, *cap;
		pid_t a;

		tree();
		mount_mode(m, "--audit-max-size", "16K");
		a = flood_start("f", FLOOD, 0);
		flood_wait(a);
		/* a flush (the getxattr jailrun uses) sees the final counts */
		assert_true(getxattr(M.mnt, "user.jailfs.audit", (char[PATH_MAX + 16]){0},
				     PATH_MAX + 16) > 0);
		assert_int_equal(stat(audit_file, &st), 0);
		assert_true(st.st_size <= CAP);
		all = load_records(audit_file);
		cap = last_record(all);
		assert_string_equal(sget(cap, "op"), "capped");
		hidden_of(all, a, &rec, &supp, &sums);
		print_message("mode %d: %lld bytes, %zu hidden written, capped count %lld\n", m,
			      (long long)st.st_size, rec, (long long)nget(cap, "count", NULL));
		assert_int_equal(rec + (size_t)nget(cap, "by_decision", "hide"), FLOOD);
		assert_int_equal(nget(cap, "max_size", NULL), CAP);
		json_decref(all);
		stop_daemon(SIGTERM);
		assert_int_equal(stat(audit_file, &st), 0);
		assert_true(st.st_size <= CAP);
		mu_tree_free(&M);
	}
}

/*
 * A program that calls itself "git": a copy of cat named git, and a process
 * renamed with prctl(PR_SET_NAME). Each hidden lookup records comm "git" and
 * the real executable's path; --audit-report names it. Every mode.
 */
static void test_exe_of_renamed(void **state)
{
	const char *jailfs = getenv("JAILFS");

	for (int m = 0; m < (int)(sizeof(bound_modes) / sizeof(bound_modes[0])); m++) {
		char git[PATH_MAX], real_git[PATH_MAX], self[PATH_MAX] = "", cmd[PATH_MAX * 2];
		json_t *all, *o;
		char *out;
		pid_t pid;
		ssize_t n;

		tree();
		snprintf(git, sizeof(git), "%s/git", M.dir);
		snprintf(cmd, sizeof(cmd), "cp /bin/cat '%s'", git);
		assert_int_equal(system(cmd), 0);
		assert_non_null(realpath(git, real_git));
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		assert_true(n > 0);
		self[n] = '\0';
		mount_mode(m, NULL, NULL);
		run((const char *[]){git, mu_v(&M, ".env"), NULL});
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct stat st;

			prctl(PR_SET_NAME, "git");
			_exit(stat(mu_v(&M, "keys/a.secret"), &st) == 0);
		}
		flood_wait(pid);
		stop_daemon(SIGTERM);

		all = load_records(audit_file);
		o = find(all, "path=.env", "decision=hide", "comm=git", NULL);
		if (!o)
			dump(all);
		assert_non_null(o);
		assert_non_null(sget(o, "exe"));
		assert_string_equal(sget(o, "exe"), real_git);
		o = find(all, "path=keys/a.secret", "decision=hide", "comm=git", NULL);
		assert_non_null(o);
		assert_non_null(sget(o, "exe"));
		assert_string_equal(sget(o, "exe"), self);
		json_decref(all);

		snprintf(cmd, sizeof(cmd), "'%s' --audit-report '%s'", jailfs, audit_file);
		out = sh_out(cmd);
		if (!strstr(out, real_git) || !strstr(out, self))
			fail_msg("report does not name the executables:\n%s", out);
		free(out);
		mu_tree_free(&M);
	}
}

/* Also after a failed assertion: no mount and no tree left behind. */
static int teardown(void **state)
{
	if (M.dir[0])
		mu_tree_free(&M);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_op_classes, teardown),
		cmocka_unit_test_teardown(test_level_writes, teardown),
		cmocka_unit_test_teardown(test_fast_open_refusals, teardown),
		cmocka_unit_test_teardown(test_fast_open_one_record_each, teardown),
		cmocka_unit_test_teardown(test_size_refusals_recorded, teardown),
		cmocka_unit_test_teardown(test_sighup_rotation, teardown),
		cmocka_unit_test_teardown(test_sigterm_flushes, teardown),
		cmocka_unit_test_teardown(test_unmount_flushes, teardown),
		cmocka_unit_test_teardown(test_sync_sigkill, teardown),
		cmocka_unit_test_teardown(test_audit_report_on_real_log, teardown),
		cmocka_unit_test_teardown(test_hidden_recorded_once, teardown),
		cmocka_unit_test_teardown(test_fast_open_level_all, teardown),
		cmocka_unit_test_teardown(test_sigterm_flushes_fast_open, teardown),
		cmocka_unit_test_teardown(test_live_log_window, teardown),
		cmocka_unit_test_teardown(test_rate_per_process, teardown),
		cmocka_unit_test_teardown(test_size_cap, teardown),
		cmocka_unit_test_teardown(test_exe_of_renamed, teardown),
	};

	mu_require_fuse();
	return cmocka_run_group_tests_name("mount-audit", tests, NULL, NULL);
}
