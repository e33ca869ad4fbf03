/* SPDX-License-Identifier: MIT */
/* The jail's seccomp filter: what it refuses, compiled once, loaded by the
 * command. Source: seccomp(2), seccomp_rule_add(3). */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "seccomp-filter.h"

/*
 * Syscalls refused with EPERM (kernel attack surface and ways around the
 * wall): mounts, namespaces, tracing other processes, keyrings, BPF, perf,
 * io_uring (bypasses seccomp for its ops), kexec, modules, handle-based opens
 * (the "shocker" escape), userfaultfd. clone() with any namespace flag is
 * refused; clone3 answers ENOSYS so libc falls back to clone, whose flags we
 * can see. Sockets and terminal ioctls: see socket_rules() and tty_rules().
 */
static struct sock_fprog seccomp_prog; /* built by jr_seccomp_build, loaded by the command */

static const int denied_syscalls[] = {
	SCMP_SYS(mount),
	SCMP_SYS(umount2),
	SCMP_SYS(pivot_root),
	SCMP_SYS(chroot),
	SCMP_SYS(unshare),
	SCMP_SYS(setns),
	SCMP_SYS(ptrace),
	SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev),
	SCMP_SYS(keyctl),
	SCMP_SYS(add_key),
	SCMP_SYS(request_key),
	SCMP_SYS(bpf),
	SCMP_SYS(perf_event_open),
	SCMP_SYS(io_uring_setup),
	SCMP_SYS(io_uring_enter),
	SCMP_SYS(io_uring_register),
	SCMP_SYS(kexec_load),
	SCMP_SYS(kexec_file_load),
	SCMP_SYS(init_module),
	SCMP_SYS(finit_module),
	SCMP_SYS(delete_module),
	SCMP_SYS(open_by_handle_at),
	SCMP_SYS(name_to_handle_at),
	SCMP_SYS(userfaultfd),
	SCMP_SYS(fsopen),
	SCMP_SYS(fsmount),
	SCMP_SYS(fsconfig),
	SCMP_SYS(move_mount),
	SCMP_SYS(open_tree),
	SCMP_SYS(mount_setattr),
	SCMP_SYS(swapon),
	SCMP_SYS(swapoff),
	SCMP_SYS(acct),
	SCMP_SYS(quotactl),
	SCMP_SYS(lookup_dcookie),
	SCMP_SYS(syslog),
	SCMP_SYS(vhangup),
};

/*
 * Address families: an allowlist. AF_UNIX, AF_INET and AF_INET6 (the network
 * namespace already isolates them unless --net) and AF_NETLINK with
 * NETLINK_ROUTE only (getaddrinfo, getifaddrs, ip); every other family
 * (AF_VSOCK reaches the hypervisor, AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_KEY,
 * AF_XDP... kernel attack surface the jail has no use for) answers
 * EAFNOSUPPORT, as a kernel without that family would; other netlink
 * protocols answer EPROTONOSUPPORT. The refused families are written as
 * every value that is not allowed: 0, the gaps below AF_NETLINK, and
 * everything from AF_NETLINK + 1 up (so families added to the kernel later,
 * and values with high bits set, are refused too). The same rules hold for
 * socketpair(2).
 */
static int socket_rules(scmp_filter_ctx ctx)
{
	static const int allowed[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
	static const int calls[] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
	const uint32_t refuse = SCMP_ACT_ERRNO(EAFNOSUPPORT);
	int r = 0;

	for (size_t c = 0; c < ARRAY_SIZE(calls) && r == 0; c++) {
		for (int af = 0; af < AF_NETLINK && r == 0; af++) {
			bool ok = false;

			for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
				ok |= allowed[i] == af;
			if (!ok)
				r = seccomp_rule_add(ctx, refuse, calls[c], 1,
						     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)af));
		}
		if (r == 0)
			r = seccomp_rule_add(ctx, refuse, calls[c], 1,
					     SCMP_A0(SCMP_CMP_GT, (scmp_datum_t)AF_NETLINK));
		if (r == 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), calls[c], 2,
					     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_NETLINK),
					     SCMP_A2(SCMP_CMP_NE, (scmp_datum_t)NETLINK_ROUTE));
	}
	return r;
}

/*
 * The command may hold the caller's terminal as its stdin. Refused with
 * EPERM: TIOCSTI and TIOCLINUX (type into it), TIOCSWINSZ (the window size
 * is the terminal emulator's to set, and restoring it afterwards would undo
 * a resize the user made meanwhile), TIOCSETD (a line discipline other than
 * N_TTY breaks it for good), TCXONC (TCOOFF would leave its output
 * suspended), TIOCEXCL and TIOCNXCL (exclusive mode outlives the command:
 * every later open of the terminal would answer EBUSY) and TCFLSH (throws
 * away what the user typed ahead for the programs after it). The termios
 * settings, the exclusive flag and the file status flags (O_NONBLOCK) of
 * fds 0-2 jailrun restores when the command ends (capture.c).
 */
static int tty_rules(scmp_filter_ctx ctx)
{
	static const unsigned long ioctls[] = {TIOCSTI, TIOCLINUX, TIOCSWINSZ, TIOCSETD,
					       TCXONC,	TIOCEXCL,  TIOCNXCL,   TCFLSH};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ioctls) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]));
	return r;
}

static int seccomp_rules(scmp_filter_ctx ctx)
{
	static const unsigned long ns_flags[] = {CLONE_NEWNS,	  CLONE_NEWUSER, CLONE_NEWPID,
						 CLONE_NEWNET,	  CLONE_NEWIPC,	 CLONE_NEWUTS,
						 CLONE_NEWCGROUP, 0x00000080 /* CLONE_NEWTIME */};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied_syscalls[i], 0);
	for (size_t i = 0; i < ARRAY_SIZE(ns_flags) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r == 0)
		r = socket_rules(ctx);
	if (r == 0)
		r = tty_rules(ctx);
	return r;
}

int jr_seccomp_build(void)
{
	scmp_filter_ctx ctx;
	int r = 0, fd;
	off_t size;

	if (seccomp_prog.filter)
		return 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
#ifdef __x86_64__
	/* the 32-bit ABIs get the same rules (int 0x80 would skip them otherwise) */
	seccomp_arch_add(ctx, SCMP_ARCH_X86);
	seccomp_arch_add(ctx, SCMP_ARCH_X32);
#endif
	r = seccomp_rules(ctx);
	/* compiled once here, loaded with one prctl in the command (no libseccomp
	 * work between fork and exec) */
	fd = memfd_create("jailrun-seccomp", MFD_CLOEXEC);
	if (r == 0 && fd < 0)
		r = -errno;
	if (r == 0)
		r = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (r == 0 && (size = lseek(fd, 0, SEEK_END)) > 0) {
		seccomp_prog.filter = malloc(size);
		if (seccomp_prog.filter && pread(fd, seccomp_prog.filter, size, 0) == size)
			seccomp_prog.len = size / sizeof(struct sock_filter);
		else
			r = -EIO;
	} else if (r == 0) {
		r = -EIO;
	}
	if (fd >= 0)
		close(fd);
	return r;
}

int jr_seccomp_load(void)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &seccomp_prog, 0, 0) < 0)
		return -errno;
	return 0;
}
