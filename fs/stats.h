/* SPDX-License-Identifier: MIT */
/*
 * Request counters: how many FUSE requests of each kind the daemon received
 * from the kernel, counted where they are read from /dev/fuse (passthrough.c) or taken from
 * an io_uring queue (uring.c).
 * Reported as one line, "jailfs: requests: total=N LOOKUP=N ...", at exit
 * (with -d or --stats) and on SIGUSR1, so a workload's cost in round trips
 * can be read off (bench/run divides them by the files it made).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Count one request with FUSE opcode @opcode. Lock-free, any thread,
 * async-signal-safe. */
void jf_stats_count(uint32_t opcode);
/* Count an open or create answered with a passthrough handle. */
void jf_stats_count_passthrough(void);
/* Count a request taken from an io_uring queue (uring.h) rather than read
 * from /dev/fuse; it is also counted by opcode. Reported as uring=N. */
void jf_stats_count_uring(void);
/* Requests of opcode @opcode received so far (tests, reports). */
uint64_t jf_stats_get(uint32_t opcode);
/* Requests of every kind received so far (idle.c: has anything asked?).
 * Lock-free, any thread. */
uint64_t jf_stats_total(void);

/* Where reports go: @path (appended to, created 0600; NULL = stderr).
 * Opens it now, before the daemon detaches, and installs the SIGUSR1
 * handler. Returns 0 or a negative errno from open(2). Main thread, once. */
int jf_stats_start(const char *path);
/* Write one report line to the stats file (or stderr). Async-signal-safe:
 * formats into a stack buffer and write(2)s it once. */
void jf_stats_report(void);
/* Close the stats file. Main thread, at exit. */
void jf_stats_stop(void);
