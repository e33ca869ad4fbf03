/* SPDX-License-Identifier: MIT */
/*
 * The command's output on its way to the caller's terminal (termfilter.c):
 * the escape sequences that act on the terminal rather than draw text are
 * dropped. Pure; one state per stream; not thread-safe.
 */
#pragma once

#include <stddef.h>

/* Longest CSI sequence kept whole (bytes, ESC included); a longer one is
 * dropped. */
#define JR_TF_HOLD 64

struct jr_termfilter {
	int state;	       /* where in a sequence the last call stopped */
	int cont;	       /* UTF-8 continuation bytes still expected */
	size_t held;	       /* bytes of @hold in use */
	char hold[JR_TF_HOLD]; /* a CSI sequence not ended yet */
};

/*
 * Filter @n bytes of @in into @out, which must hold @n + JR_TF_HOLD bytes;
 * returns how many were written. A sequence cut across calls is held in @f
 * and decided when it ends. Kept: text (valid or not as UTF-8, but for C1
 * controls), TAB LF CR BS BEL, and CSI sequences without private or
 * intermediate bytes ending in: m (SGR, unless one of its attributes is 8,
 * conceal), A-H, f, d (cursor movement), J K X (erase). Dropped: every other
 * C0 control (SO/SI switch the character set, ENQ asks for the answerback),
 * every other ESC sequence (ESC c resets the terminal, ESC ( 0 switches to
 * line drawing), every other CSI (window manipulation: CSI 8;r;c t; modes:
 * CSI ?...h; reports the terminal would type back), OSC DCS APC PM SOS
 * strings up to their end (OSC 52 writes the clipboard, OSC 8 hides links),
 * and C1 controls, 8-bit or UTF-8 encoded (U+0080-U+009F).
 * A zeroed struct is the initial state.
 */
size_t jr_termfilter(struct jr_termfilter *f, const char *in, size_t n, char *out);
