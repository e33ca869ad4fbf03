/* tally: print the line, word and byte counts of each FILE (or stdin). */
#include <stdio.h>
#include <string.h>

#include "count.h"
#include "version.h"

static int tally_one(const char *name, struct tally *total)
{
	struct tally t = { 0 };
	FILE *f = strcmp(name, "-") == 0 ? stdin : fopen(name, "r");

	if (!f) {
		perror(name);
		return 1;
	}
	if (tally_stream(f, &t) < 0) {
		perror(name);
		return 1;
	}
	if (f != stdin)
		fclose(f);
	printf("%zu %zu %zu %s\n", t.lines, t.words, t.bytes, name);
	total->lines += t.lines;
	total->words += t.words;
	total->bytes += t.bytes;
	return 0;
}

int main(int argc, char **argv)
{
	struct tally total = { 0 };
	int status = 0;

	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("tally %s\n", TALLY_VERSION);
		return 0;
	}
	if (argc < 2)
		return tally_one("-", &total);
	for (int i = 1; i < argc; i++)
		status |= tally_one(argv[i], &total);
	if (argc > 2)
		printf("%zu %zu %zu total\n", total.lines, total.words, total.bytes);
	return status;
}
