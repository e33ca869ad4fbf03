#include <ctype.h>

#include "count.h"

int tally_stream(FILE *f, struct tally *t)
{
	int c, in_word = 0;

	while ((c = getc(f)) != EOF) {
		t->bytes++;
		if (c == '\n')
			t->lines++;
		if (isspace(c)) {
			in_word = 0;
		} else if (!in_word) {
			in_word = 1;
			t->words++;
		}
	}
	return ferror(f) ? -1 : 0;
}
