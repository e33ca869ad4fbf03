/* SPDX-License-Identifier: MIT */
/*
 * One request at a time through the kernel's asynchronous I/O interfaces,
 * io_uring and Linux AIO, with raw system calls (no liburing or libaio):
 * tests use them to reach a file by every path the kernel offers. Each call
 * sets up and tears down its own ring or context; not for speed. Results
 * are a count or a negative errno, as the kernel gives them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* IORING_OP_WRITE (or, with @vec, IORING_OP_WRITEV of one iovec) of @len
 * bytes of @buf at @off. -ENOSYS when io_uring is unavailable. */
int iu_uring_write(int fd, const char *buf, size_t len, off_t off, bool vec);
/* IORING_OP_FALLOCATE, as fallocate(@fd, @mode, @off, @len). */
int iu_uring_fallocate(int fd, int mode, off_t off, off_t len);
/* IORING_OP_FTRUNCATE (Linux >= 6.9), as ftruncate(@fd, @size). */
int iu_uring_ftruncate(int fd, off_t size);
/* One IOCB_CMD_PWRITE through io_submit(2) and io_getevents(2). */
long iu_aio_write(int fd, const char *buf, size_t len, off_t off);
