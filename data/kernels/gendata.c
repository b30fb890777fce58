/* SPDX-License-Identifier: BSD-3-Clause */
/* Deterministic inputs for the corpus's tool workloads: text, CSV, JSON and SQL (not a kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x243f6a8885a308d3u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static const char *const syllables[] = {
    "ka", "ri",	 "to", "men", "sa", "lo",  "ve", "dan", "qui", "ber", "no", "stra",
    "el", "phi", "ux", "or",  "ta", "gen", "mo", "ri",	"cal", "de",  "zo", "in",
};

/* Zipf-like word choice: a few words are very common, as in natural text, so it compresses. */
static void word(char *buf, size_t size)
{
	uint64_t r = next();
	int n = 1 + (int)(r % 3) + (int)((r >> 8) % 7 == 0);
	unsigned vocab = 1u << (4 + (unsigned)((r >> 16) % 12));
	uint64_t id = (r >> 32) % vocab;
	size_t len = 0;

	for (int i = 0; i < n && len + 5 < size; i++) {
		const char *s = syllables[((id >> (4 * i)) + (unsigned)i) % 24];
		size_t l = strlen(s);
		memcpy(buf + len, s, l);
		len += l;
	}
	buf[len] = '\0';
}

static void text(long lines)
{
	char w[64];

	for (long i = 0; i < lines; i++) {
		int words = 4 + (int)(next() % 12);
		for (int j = 0; j < words; j++) {
			word(w, sizeof w);
			fputs(w, stdout);
			putchar(j + 1 < words ? ' ' : '\n');
		}
	}
}

static void csv(long rows)
{
	static const char *const region[] = {"north", "south", "east", "west", "centre"};

	puts("id,region,product,quantity,price");
	for (long i = 0; i < rows; i++)
		printf("%ld,%s,p%03u,%u,%u.%02u\n", i, region[next() % 5], (unsigned)(next() % 500),
		       1 + (unsigned)(next() % 50), 1 + (unsigned)(next() % 200),
		       (unsigned)(next() % 100));
}

static void json(long items)
{
	char w[64];

	puts("[");
	for (long i = 0; i < items; i++) {
		word(w, sizeof w);
		printf("{\"id\":%ld,\"name\":\"%s\",\"score\":%u,\"tags\":[\"t%u\",\"t%u\"],"
		       "\"active\":%s}%s\n",
		       i, w, (unsigned)(next() % 1000), (unsigned)(next() % 20),
		       (unsigned)(next() % 20), next() % 3 ? "true" : "false",
		       i + 1 < items ? "," : "");
	}
	puts("]");
}

/* Inserts, an index, then joins and aggregates: sqlite's parser, B-trees and sorter. */
static void sql(long rows)
{
	char w[64];

	puts("PRAGMA journal_mode=OFF;\nCREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, "
	     "grp INTEGER, price REAL);\nCREATE TABLE sale(item INTEGER, qty INTEGER, day "
	     "INTEGER);\nBEGIN;");
	for (long i = 0; i < rows / 10; i++) {
		word(w, sizeof w);
		printf("INSERT INTO item VALUES(%ld,'%s',%u,%u.%02u);\n", i, w,
		       (unsigned)(next() % 40), (unsigned)(next() % 100), (unsigned)(next() % 100));
	}
	for (long i = 0; i < rows; i++)
		printf("INSERT INTO sale VALUES(%u,%u,%u);\n", (unsigned)(next() % (rows / 10)),
		       1 + (unsigned)(next() % 9), (unsigned)(next() % 365));
	puts("COMMIT;\nCREATE INDEX sale_item ON sale(item);\n"
	     "SELECT grp, count(*), sum(qty*price) FROM sale JOIN item ON item.id = sale.item "
	     "GROUP BY grp ORDER BY 3 DESC;\n"
	     "SELECT day, sum(qty) FROM sale GROUP BY day ORDER BY 2 DESC LIMIT 5;\n"
	     "SELECT name, count(*) FROM item GROUP BY name ORDER BY 2 DESC LIMIT 5;\n"
	     "SELECT count(*) FROM sale a JOIN sale b ON a.item = b.item AND a.day < b.day "
	     "WHERE a.qty = 9;\n"
	     "UPDATE item SET price = price * 1.1 WHERE grp % 3 = 0;\n"
	     "DELETE FROM sale WHERE day % 7 = 0;\nVACUUM;\n"
	     "SELECT count(*), avg(qty) FROM sale;");
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: gendata text|csv|json|sql COUNT\n");
		return 2;
	}
	if (strcmp(argv[1], "text") == 0)
		text(n);
	else if (strcmp(argv[1], "csv") == 0)
		csv(n);
	else if (strcmp(argv[1], "json") == 0)
		json(n);
	else if (strcmp(argv[1], "sql") == 0)
		sql(n);
	else {
		fprintf(stderr, "gendata: unknown kind '%s'\n", argv[1]);
		return 2;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
