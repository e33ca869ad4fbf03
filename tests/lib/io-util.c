/* SPDX-License-Identifier: MIT */
/* io_uring and Linux AIO, one request at a time (io-util.h). */
#include <errno.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io-util.h"

/* Linux >= 6.9; older headers lack it. */
#ifndef IORING_OP_FTRUNCATE
#define IORING_OP_FTRUNCATE 55
#endif

struct ring {
	int fd;
	struct io_uring_params p;
	char *sq, *cq;
	size_t sq_size, cq_size;
	struct io_uring_sqe *sqes;
};

static int ring_open(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_io_uring_setup, 1, &r->p);
	if (r->fd < 0)
		return -ENOSYS;
	r->sq_size = r->p.sq_off.array + r->p.sq_entries * sizeof(unsigned);
	r->cq_size = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
	if (r->p.features & IORING_FEAT_SINGLE_MMAP)
		r->sq_size = r->cq_size = r->sq_size > r->cq_size ? r->sq_size : r->cq_size;
	r->sq = mmap(NULL, r->sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		     IORING_OFF_SQ_RING);
	r->cq = (r->p.features & IORING_FEAT_SINGLE_MMAP)
			? r->sq
			: mmap(NULL, r->cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			       r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->p.sq_entries * sizeof(*r->sqes), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		close(r->fd);
		return -ENOMEM;
	}
	return 0;
}

static void ring_close(struct ring *r)
{
	munmap(r->sqes, r->p.sq_entries * sizeof(*r->sqes));
	if (r->cq != r->sq)
		munmap(r->cq, r->cq_size);
	munmap(r->sq, r->sq_size);
	close(r->fd);
}

/* Submit @tmpl as the only request of a fresh ring, wait, return its result. */
static int uring_one(const struct io_uring_sqe *tmpl)
{
	struct ring r;
	unsigned *tail, mask, head;
	int res = ring_open(&r);

	if (res < 0)
		return res;
	r.sqes[0] = *tmpl;
	tail = (unsigned *)(r.sq + r.p.sq_off.tail);
	mask = *(unsigned *)(r.sq + r.p.sq_off.ring_mask);
	((unsigned *)(r.sq + r.p.sq_off.array))[*tail & mask] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) != 1) {
		res = -errno;
		ring_close(&r);
		return res;
	}
	head = __atomic_load_n((unsigned *)(r.cq + r.p.cq_off.head), __ATOMIC_ACQUIRE);
	mask = *(unsigned *)(r.cq + r.p.cq_off.ring_mask);
	res = ((struct io_uring_cqe *)(r.cq + r.p.cq_off.cqes))[head & mask].res;
	ring_close(&r);
	return res;
}

int iu_uring_write(int fd, const char *buf, size_t len, off_t off, bool vec)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct io_uring_sqe s = {.opcode = vec ? IORING_OP_WRITEV : IORING_OP_WRITE, .fd = fd};

	s.off = (uint64_t)off;
	s.addr = vec ? (uint64_t)(uintptr_t)&iov : (uint64_t)(uintptr_t)buf;
	s.len = vec ? 1 : (uint32_t)len;
	return uring_one(&s);
}

int iu_uring_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct io_uring_sqe s = {.opcode = IORING_OP_FALLOCATE, .fd = fd};

	s.off = (uint64_t)off;
	s.addr = (uint64_t)len; /* the length travels in addr, the mode in len */
	s.len = (uint32_t)mode;
	return uring_one(&s);
}

int iu_uring_ftruncate(int fd, off_t size)
{
	struct io_uring_sqe s = {.opcode = IORING_OP_FTRUNCATE, .fd = fd};

	s.off = (uint64_t)size;
	return uring_one(&s);
}

long iu_aio_write(int fd, const char *buf, size_t len, off_t off)
{
	aio_context_t ctx = 0;
	struct iocb cb = {.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = (uint32_t)fd};
	struct iocb *cbs[1] = {&cb};
	struct io_event ev;
	long r;

	cb.aio_buf = (uint64_t)(uintptr_t)buf;
	cb.aio_nbytes = len;
	cb.aio_offset = off;
	if (syscall(__NR_io_setup, 1, &ctx) < 0)
		return -errno;
	r = syscall(__NR_io_submit, ctx, 1, cbs);
	if (r == 1)
		r = syscall(__NR_io_getevents, ctx, 1, 1, &ev, NULL) == 1 ? (long)ev.res : -EIO;
	else
		r = -errno;
	syscall(__NR_io_destroy, ctx);
	return r;
}
