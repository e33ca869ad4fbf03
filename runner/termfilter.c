/* SPDX-License-Identifier: MIT */
/*
 * What of the command's output may reach the caller's terminal. The output
 * is the command's, the terminal is the user's: a sequence that writes the
 * clipboard (OSC 52), resizes or moves the window (CSI t), hides text
 * (conceal) or types into the terminal's input (reports, the answerback)
 * acts for the command outside the jail. What draws text stays: colours and
 * attributes, cursor movement and erasing (progress bars, test runners).
 * The grammar is ECMA-48's, as terminals parse it: a C0 control inside a
 * CSI sequence ends it, ESC inside a string starts a new sequence, CAN and
 * SUB abort one.
 */
#include <stdbool.h>
#include <string.h>

#include "termfilter.h"

enum {
	GROUND,	   /* text */
	ESC,	   /* after ESC */
	ESC_INTER, /* ESC and intermediate bytes: dropped up to the final byte */
	CSI,	   /* a CSI sequence, held in f->hold */
	CSI_DROP,  /* a CSI sequence too long to hold: dropped to its end */
	STR,	   /* OSC DCS APC PM SOS: dropped to ST or BEL */
	STR_ESC,   /* ESC inside a string: ST if '\' follows */
	C2,	   /* a UTF-8 lead 0xC2: U+0080-U+009F are C1 controls */
};

#define CAN 0x18
#define SUB 0x1a

static bool c0_allowed(unsigned char c)
{
	return c == '\t' || c == '\n' || c == '\r' || c == '\b' || c == '\a';
}

/* A C1 control @c (0x80-0x9F, 8-bit or decoded from UTF-8): CSI and the
 * string introducers start what their 7-bit forms would; the rest is
 * dropped. */
static void c1(struct jr_termfilter *f, unsigned char c)
{
	if (c == 0x9b) {
		memcpy(f->hold, "\033[", 2);
		f->held = 2;
		f->state = CSI;
	} else if (c == 0x90 || c == 0x9d || c == 0x9e || c == 0x9f || c == 0x98) {
		f->state = STR;
	} else {
		f->state = GROUND;
	}
}

/* Does the SGR parameter string @p (@n bytes) set conceal (8)? Colour
 * arguments (38;5;N, 38;2;R;G;B and the same for 48 and 58) are skipped, so
 * colour 8 is not conceal; a parameter with ':' sub-parameters is one
 * colour. Anything but digits, ';' and ':' counts as conceal (dropped). */
static bool sgr_conceals(const char *p, size_t n)
{
	int skip = 0, colour = 0;

	for (size_t i = 0; i <= n;) {
		size_t end = i;
		bool sub = false;
		unsigned v = 0;

		while (end < n && p[end] != ';') {
			if (p[end] == ':')
				sub = true;
			else if (p[end] < '0' || p[end] > '9')
				return true;
			else if (v < 1000)
				v = v * 10 + (unsigned)(p[end] - '0');
			end++;
		}
		if (skip > 0) {
			skip--;
		} else if (colour) {
			skip = v == 5 ? 1 : v == 2 ? 3 : 0;
			colour = 0;
		} else if (!sub && (v == 38 || v == 48 || v == 58)) {
			colour = 1;
		} else if (!sub && v == 8) {
			return true;
		}
		i = end + 1;
	}
	return false;
}

/* A held CSI sequence ended with @final: may it reach the terminal? */
static bool csi_allowed(const struct jr_termfilter *f, unsigned char final)
{
	const char *p = f->hold + 2;
	size_t n = f->held - 2;

	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > ';')
			return false; /* private markers <=>? and intermediates */
	if (final == 'm')
		return !sgr_conceals(p, n);
	return strchr("ABCDEFGHfdJKX", final) != NULL;
}

static void emit(char *out, size_t *o, unsigned char c)
{
	out[(*o)++] = (char)c;
}

/* Text: UTF-8 is followed so that a continuation byte is not taken for an
 * 8-bit C1 control. */
static void ground(struct jr_termfilter *f, unsigned char c, char *out, size_t *o)
{
	if (f->cont > 0 && c >= 0x80 && c <= 0xbf) {
		f->cont--;
		emit(out, o, c);
		return;
	}
	f->cont = 0;
	if (c == 0x1b) {
		f->state = ESC;
	} else if (c < 0x20) {
		if (c0_allowed(c))
			emit(out, o, c);
	} else if (c < 0x80) {
		emit(out, o, c);
	} else if (c == 0xc2) {
		f->state = C2;
	} else if (c <= 0x9f) {
		c1(f, c);
	} else {
		f->cont = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		emit(out, o, c);
	}
}

/* One byte in state f->state. Returns false when @c must be read again
 * in the state it left (it ended a sequence without belonging to it). */
static bool step(struct jr_termfilter *f, unsigned char c, char *out, size_t *o)
{
	switch (f->state) {
	case GROUND:
		ground(f, c, out, o);
		return true;
	case C2:
		f->state = GROUND;
		if (c >= 0x80 && c <= 0x9f) {
			c1(f, c);
			return true;
		}
		emit(out, o, 0xc2);
		if (c >= 0xa0 && c <= 0xbf) {
			emit(out, o, c);
			return true;
		}
		return false;
	case ESC:
		f->state = GROUND;
		if (c == '[') {
			memcpy(f->hold, "\033[", 2);
			f->held = 2;
			f->state = CSI;
		} else if (c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X') {
			f->state = STR;
		} else if (c >= 0x20 && c <= 0x2f) {
			f->state = ESC_INTER;
		} else if (c == 0x1b) {
			f->state = ESC;
		} else if (c < 0x20 && c != CAN && c != SUB) {
			return false;
		} else if (c > 0x7e) {
			return false;
		}
		return true;
	case ESC_INTER:
		if (c >= 0x20 && c <= 0x2f)
			return true;
		f->state = GROUND;
		return c >= 0x30 && c <= 0x7e;
	case CSI:
		if (c >= 0x20 && c <= 0x3f) {
			if (f->held == sizeof(f->hold))
				f->state = CSI_DROP;
			else
				f->hold[f->held++] = (char)c;
			return true;
		}
		f->state = GROUND;
		if (c < 0x40 || c > 0x7e)
			return c == CAN || c == SUB; /* held bytes dropped */
		if (csi_allowed(f, c)) {
			memcpy(out + *o, f->hold, f->held);
			*o += f->held;
			emit(out, o, c);
		}
		return true;
	case CSI_DROP:
		if (c >= 0x20 && c <= 0x3f)
			return true;
		f->state = GROUND;
		return (c >= 0x40 && c <= 0x7e) || c == CAN || c == SUB;
	case STR:
		if (c == 0x07 || c == 0x9c || c == CAN || c == SUB)
			f->state = GROUND;
		else if (c == 0x1b)
			f->state = STR_ESC;
		return true;
	case STR_ESC:
		if (c == '\\') {
			f->state = GROUND;
			return true;
		}
		f->state = ESC; /* ESC began a new sequence */
		return false;
	}
	f->state = GROUND;
	return false;
}

size_t jr_termfilter(struct jr_termfilter *f, const char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		while (!step(f, (unsigned char)in[i], out, &o))
			;
	return o;
}
