#pragma once
#include <stddef.h>
#include <stdio.h>

struct tally {
	size_t lines;
	size_t words;
	size_t bytes;
};

/* Add the contents of @f to @t. Returns 0, or -1 on a read error. */
int tally_stream(FILE *f, struct tally *t);
