/* SPDX-License-Identifier: MIT */
/*
 * FUSE over io_uring (-o io_uring; Linux >= 6.14, fuse module parameter
 * enable_uring=Y, the daemon root).
 *
 * The kernel then queues each request on the ring queue of the CPU it was
 * made on (one queue per possible CPU), in a buffer the daemon registered,
 * instead of on /dev/fuse: a thread pinned to that CPU serves it and sends
 * the reply back in the same buffer with the command that fetches the next
 * request, so a request costs no wake-up of a thread on another CPU.
 * FORGET and INTERRUPT still come through /dev/fuse, and so does everything
 * until every queue has registered; notifications always go there. One
 * thread per queue: a slow request holds up the others made on its CPU.
 *
 * Requests taken from a ring are handed to libfuse as /dev/fuse would have
 * delivered them (fuse_session_process_buf()); the reply comes back through
 * our writev/splice hooks (passthrough.c), which pass it here first. It must
 * be sent from the thread serving the request before the handler returns:
 * every jailfs handler replies synchronously.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "options.h"

/* With -o io_uring, after fuse_session_mount() and before the daemon
 * detaches (so the caller's terminal hears why not): check that the daemon
 * is root and the fuse module's enable_uring is Y, and remember @se. When
 * not, says why on stderr and the daemon serves from /dev/fuse alone. Main
 * thread, once. */
void jf_uring_prepare(struct fuse_session *se);

/* From the INIT handler: the flags (FUSE_OVER_IO_URING or 0) the INIT reply
 * adds for io_uring, given the INIT request's flags | flags2 << 32. Asks only
 * once the kernel offered it and one io_uring (io_uring_setup(2)), its
 * buffers and a thread pinned to the CPU exist for every possible CPU;
 * otherwise says why on stderr (seen with -f) and returns 0. */
uint64_t jf_uring_init_flags(uint64_t kernel_flags);

/* The INIT reply has been written to /dev/fuse (the kernel accepts ring
 * registrations only from then on): the queue threads register their
 * entries and start serving. Any thread; no-op without io_uring. */
void jf_uring_start(void);

/* The writev hook's first stop: when this thread is serving a ring request
 * and @iov (fuse_out_header first) is its reply, copy it into the request's
 * ring entry (committed when the handler returns) and return the bytes
 * taken; -1 otherwise (the reply goes to /dev/fuse). */
ssize_t jf_uring_reply(const struct iovec *iov, int count);

/* The splice hook's: the same for a reply libfuse put into the pipe @fd
 * (@len bytes, header first): read it into the ring entry. Returns @len,
 * -1 with errno set after a failed read, or -2 when it is not a ring reply
 * (nothing read: splice it to /dev/fuse). */
ssize_t jf_uring_reply_pipe(int fd, size_t len);

/* Stop the queue threads, join them, close the rings and free the buffers.
 * Main thread, after the session loop ended; idempotent. */
void jf_uring_stop(void);
