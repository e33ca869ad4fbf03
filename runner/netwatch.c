/* SPDX-License-Identifier: MIT */
/*
 * Without --net the jail's network namespace has only loopback: a connect()
 * to anywhere else fails at once with ENETUNREACH, and a package manager
 * retries it for minutes (npm install: DNS over UDP every few seconds until
 * the timeout). So that the caller hears of it at the first attempt, the
 * command gets one more seccomp filter whose connect() calls are reported to
 * jailrun (SECCOMP_RET_USER_NOTIF). jailrun only looks: it reads the address,
 * says "network is off" once for the first one leaving the jail, and lets
 * every call go on as it would have (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The
 * namespace stays the wall; nothing here decides what may connect, so a
 * changed address (the TOCTOU of user notification) changes only the note.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "netwatch.h"

/* The native ABI only: a 32-bit program's connect() (socketcall on i386)
 * goes unreported, and is refused by the namespace all the same. */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#define NATIVE_ARCH 0 /* not watched: the command runs, without the early note */
#endif

int jr_netwatch_install(int sock)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	char byte = 'n';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd, r = 0;

	if (!NATIVE_ARCH)
		return -ENOSYS;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	if (fd < 0)
		return -errno;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &m, MSG_NOSIGNAL) < 0)
		r = -errno;
	close(fd);
	return r;
}

int jr_netwatch_recv(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) <= 0)
		return errno ? -errno : -ENODATA;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Read @n bytes at @addr of process @pid (root, or our own user namespace's
 * child: ptrace access). Returns 0 or a negative errno. */
static int peek(pid_t pid, uint64_t addr, void *out, size_t n)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return pread(fd, out, n, (off_t)addr) == (ssize_t)n ? 0 : -EIO;
}

/* Does @sa leave the jail (not loopback, not a Unix socket)? Writes the
 * address as "ADDR:PORT" to @out. */
static bool leaves_jail(const struct sockaddr_storage *sa, size_t len, char *out, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "";

	if (sa->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		if ((ntohl(in->sin_addr.s_addr) >> 24) == 127)
			return false;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(out, size, "%s:%u", a, ntohs(in->sin_port));
		return true;
	}
	if (sa->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return false;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(out, size, "[%s]:%u", a, ntohs(in6->sin6_port));
		return true;
	}
	return false;
}

/* The command name of @pid (its comm), or "a process". */
static void comm_of(pid_t pid, char *out, size_t size)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n = -1;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		n = read(fd, out, size - 1);
	if (n <= 0) {
		snprintf(out, size, "a process");
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

int jr_netwatch_handle(int listener, char *what, size_t size)
{
	struct seccomp_notif req = {0};
	struct seccomp_notif_resp resp = {0};
	struct sockaddr_storage sa = {0};
	char addr[INET6_ADDRSTRLEN + 16], comm[32];
	size_t len;
	int found = 0;

	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -errno;
	len = req.data.args[2] < sizeof(sa) ? (size_t)req.data.args[2] : sizeof(sa);
	/* the address is read before the call goes on: the process waits */
	if (what && len >= sizeof(sa_family_t) && peek(req.pid, req.data.args[1], &sa, len) == 0 &&
	    leaves_jail(&sa, len, addr, sizeof(addr))) {
		comm_of(req.pid, comm, sizeof(comm));
		snprintf(what, size, "%s tried to connect to %s", comm, addr);
		found = 1;
	}
	resp.id = req.id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: the process was killed meanwhile; nothing to answer */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -errno;
	return found;
}
