/* SPDX-License-Identifier: BSD-3-Clause */
/* Results as text: one table that prints as aligned columns, CSV or JSON, and a JSON writer. */
#ifndef MPXKIT_CLI_OUTPUT_H
#define MPXKIT_CLI_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

/*
 * Every subcommand that prints results takes --format table|csv|json and
 * prints them through this file, so escaping, missing values and number
 * formats are the same everywhere:
 * - table: aligned columns for people, '#' comment lines first, no trailing
 *   blanks, a missing value shown as the column's `missing` text
 *   ("<not counted>" in the spirit of perf stat, "-" by default);
 * - CSV: RFC 4180 (a field with a comma, quote, CR or LF is quoted, quotes
 *   doubled; lines end in LF, as Unix tools expect), one header line of
 *   column keys, comments dropped, a missing value as an empty field;
 * - JSON: an array of objects keyed by column key, strings escaped per
 *   RFC 8259, a missing value or a non-finite number as null.
 * Numbers in CSV and JSON: INT plain digits, FIXED with its decimals, REAL
 * with the fewest digits that read back as the same double (its `decimals`
 * apply to the table only).  Column keys are snake_case and stable: scripts
 * depend on them.
 */
typedef enum cli_format { CLI_FORMAT_TABLE, CLI_FORMAT_CSV, CLI_FORMAT_JSON } cli_format;

/* "table", "csv" or "json"; 0, or -1 for anything else. */
int cli_parse_format(const char *text, cli_format *out);

/*
 * Escapers for code that writes its own CSV or JSON.  cli_json_string writes
 * control bytes as \u00XX, a byte that starts no valid UTF-8 sequence as
 * \ufffd (RFC 8259 texts are UTF-8), and NULL as null; cli_csv_field writes
 * NULL as an empty field.
 */
void cli_csv_field(FILE *out, const char *s);
void cli_json_string(FILE *out, const char *s);
/* A JSON number: %.*g with enough digits to round-trip at prec=17, null when not finite. */
void cli_json_number(FILE *out, double v, int prec);

/*
 * Length of the valid UTF-8 sequence (RFC 3629; U+FFFE and U+FFFF refused,
 * as XML refuses them) that starts at s: 1 to 4, or 0 when s starts none.
 */
size_t cli_utf8_len(const char *s);

/* Columns s takes in a table: its code points, an invalid byte counting as one. */
size_t cli_text_width(const char *s);

/* ---- JSON writer ----------------------------------------------------------------------------- */

/*
 * A streaming JSON writer that places commas and indentation itself, for
 * documents with nesting (analyze's spaces/findings/patterns, simt's
 * kernels).  Keys are given before each value inside an object.  Errors in
 * nesting are programming errors; they set a flag that cli_json_end reports.
 */
typedef struct cli_json cli_json;

cli_json *cli_json_new(FILE *out); /* NULL when out of memory */
void cli_json_object(cli_json *j);
void cli_json_array(cli_json *j);
void cli_json_close(cli_json *j); /* closes the innermost object or array */
void cli_json_key(cli_json *j, const char *key);
void cli_json_str(cli_json *j, const char *s); /* NULL writes null */
void cli_json_num(cli_json *j, double v);      /* %.17g trimmed; null when not finite */
void cli_json_fixed(cli_json *j, double v, int decimals);
void cli_json_int(cli_json *j, int64_t v);
void cli_json_uint(cli_json *j, uint64_t v);
void cli_json_bool(cli_json *j, int v);
void cli_json_null(cli_json *j);
/*
 * Closes what is open, ends with a newline, frees j (NULL is -1); 0, or -1
 * on a nesting error (a value without its key, a second top-level value,
 * no value at all, out of memory) or a write error on out.  Calls on NULL
 * or after an error write nothing.
 */
int cli_json_end(cli_json *j);

/* ---- tables ---------------------------------------------------------------------------------- */

typedef struct cli_table cli_table;

typedef enum cli_column_kind {
	CLI_COL_TEXT,  /* left-aligned */
	CLI_COL_INT,   /* right-aligned, digits grouped only in table output when `group` is set */
	CLI_COL_FIXED, /* right-aligned, `decimals` after the point */
	CLI_COL_REAL,  /* right-aligned, %.*g with `decimals` significant digits (default 6) */
	CLI_COL_BOOL,  /* true or false; a JSON boolean */
} cli_column_kind;

typedef struct cli_column {
	const char *key;     /* CSV header and JSON key, snake_case */
	const char *title;   /* table heading; NULL uses key */
	cli_column_kind kind;
	int decimals;        /* FIXED: digits after the point; REAL: significant digits (0 = 6) */
	int group;           /* INT: thousands separators in table output (1,234,567) */
	const char *missing; /* table text of a missing value; NULL = "-" */
} cli_column;

/* A table with the given columns (copied); NULL when out of memory. */
cli_table *cli_table_new(const cli_column *columns, size_t n_columns);
void cli_table_free(cli_table *t);

/* '#' lines printed above a table, never in CSV or JSON. printf-style. */
int cli_table_comment(cli_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Cells are added left to right; the row ends by itself after the last
 * column.  Each returns 0 or -1 when out of memory (the table then refuses
 * everything and cli_table_print returns -1).  A cell of the wrong kind is
 * a programming error and also makes the table fail.
 */
int cli_table_text(cli_table *t, const char *s); /* NULL is missing */
int cli_table_int(cli_table *t, int64_t v);
int cli_table_uint(cli_table *t, uint64_t v);
int cli_table_real(cli_table *t, double v); /* FIXED or REAL; NaN is missing */
int cli_table_bool(cli_table *t, int v);
int cli_table_missing(cli_table *t);

size_t cli_table_rows(const cli_table *t);

/*
 * Prints the whole table in the format; 0, or -1 when out of memory, on a
 * wrong cell, an unfinished last row or a write error.  In table output a
 * control byte in a text cell shows as '?', so every row stays one line.
 */
int cli_table_print(const cli_table *t, cli_format format, FILE *out);

/* The table as a JSON array value at the writer's position (for documents with several tables). */
void cli_table_json(const cli_table *t, cli_json *j);

/* The table as an HTML <table> (comments as a caption), for cli_html pages. */
void cli_table_html(const cli_table *t, FILE *out);

/*
 * Prints into memory and writes the result to path through mpxkit_outfile
 * (whole or not at all), or to stdout when path is NULL or "-".  Returns
 * CLI_OK or CLI_FAIL after one error line naming cmd.
 */
int cli_table_emit(const char *cmd, const cli_table *t, cli_format format, const char *path);

/*
 * Writes a finished text (a report, an SVG, an HTML page) to path whole:
 * through mpxkit_outfile, so a device or FIFO is written through and a
 * regular file replaced atomically.  CLI_OK or CLI_FAIL after one line.
 */
int cli_write_file(const char *cmd, const char *path, const char *text, size_t len);

/*
 * Text collected in memory (open_memstream), for building an output whole
 * before it is written.  cli_memout_close flushes and closes the stream; the
 * text stays in m->text (NUL-terminated, m->len bytes; caller frees).  Both
 * return 0, or -1 when out of memory.
 */
typedef struct cli_memout {
	FILE *f;
	char *text;
	size_t len;
} cli_memout;

int cli_memout_open(cli_memout *m);
int cli_memout_close(cli_memout *m);

#endif
