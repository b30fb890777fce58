/* SPDX-License-Identifier: BSD-3-Clause */
/* Results as text: tables printed as aligned columns, CSV or JSON, escapers and a JSON writer. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/outfile.h"

#include "cli.h"
#include "output.h"
#include "svg.h"

int cli_parse_format(const char *text, cli_format *out)
{
	static const char *const names[] = {"table", "csv", "json"};

	for (int i = 0; text && i < 3; i++)
		if (strcmp(text, names[i]) == 0) {
			*out = (cli_format)i;
			return 0;
		}
	return -1;
}

/* ---- text ------------------------------------------------------------------------------------ */

/*
 * RFC 3629: shortest forms only, no surrogates, nothing above U+10FFFF.
 * U+FFFE and U+FFFF are refused too, so the same check serves XML, where
 * they are not characters.
 */
size_t cli_utf8_len(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

size_t cli_text_width(const char *s)
{
	size_t w = 0;

	while (*s) {
		size_t n = cli_utf8_len(s);
		s += n ? n : 1;
		w++;
	}
	return w;
}

void cli_csv_field(FILE *out, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* RFC 8259 wants UTF-8: a byte that starts no valid sequence becomes U+FFFD. */
void cli_json_string(FILE *out, const char *s)
{
	if (s == NULL) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = cli_utf8_len(s);
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else if (n == 0)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, n, out);
		s += n ? n : 1;
	}
	fputc('"', out);
}

/*
 * %.*g at prec < 17; at 17 the fewest digits that read back as the same
 * double, so 0.1 prints as 0.1 and not 0.10000000000000001, in plain
 * notation from 1e-4 up to 1e16 (100, not 1e+02), as Python's repr does.
 */
static void format_real(char *buf, size_t size, double v, int prec)
{
	int p = 1, exp10;

	if (prec <= 0)
		prec = 6;
	if (prec < 17) {
		snprintf(buf, size, "%.*g", prec, v);
		return;
	}
	/* Reading back is monotone in the digits (17 always suffice): bisect, 5 tries, not 17. */
	for (int hi = 17; p < hi;) {
		int mid = (p + hi) / 2;
		snprintf(buf, size, "%.*e", mid - 1, v);
		if (strtod(buf, NULL) == v)
			hi = mid;
		else
			p = mid + 1;
	}
	snprintf(buf, size, "%.*e", p - 1, v);
	exp10 = atoi(strchr(buf, 'e') + 1);
	if (exp10 >= -4 && exp10 < 16 && exp10 + 1 > p)
		p = exp10 + 1; /* %g goes plain only while the exponent is below the precision */
	snprintf(buf, size, "%.*g", p, v);
}

/* %.*f without a sign on a value that rounds to zero ("-0.000" says nothing "0.000" does not). */
static void format_fixed(char *buf, size_t size, double v, int decimals)
{
	if (decimals < 0)
		decimals = 0;
	if (decimals > 30)
		decimals = 30;
	snprintf(buf, size, "%.*f", decimals, v);
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf));
}

void cli_json_number(FILE *out, double v, int prec)
{
	char buf[64];

	if (!isfinite(v)) {
		fputs("null", out);
		return;
	}
	format_real(buf, sizeof buf, v, prec);
	fputs(buf, out);
}

/* ---- JSON writer ----------------------------------------------------------------------------- */

typedef struct json_level {
	char close;   /* '}' or ']' */
	size_t items; /* values (arrays) or members (objects) written */
} json_level;

struct cli_json {
	FILE *out;
	json_level *stack;
	size_t depth, cap;
	int have_key; /* an object's key is written and waits for its value */
	int done;     /* the top-level value is complete */
	int error;
};

cli_json *cli_json_new(FILE *out)
{
	cli_json *j;

	if (out == NULL || (j = calloc(1, sizeof *j)) == NULL)
		return NULL;
	j->out = out;
	return j;
}

static void json_indent(cli_json *j)
{
	fputc('\n', j->out);
	for (size_t i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Before any value: checks that one may come here and writes the comma and indentation. */
static int json_value_begins(cli_json *j)
{
	json_level *top;

	if (j == NULL)
		return -1;
	if (j->error)
		return -1;
	if (j->depth == 0) {
		if (j->done) {
			j->error = 1; /* a second top-level value */
			return -1;
		}
		return 0;
	}
	top = &j->stack[j->depth - 1];
	if (top->close == '}') {
		if (!j->have_key) {
			j->error = 1; /* a value in an object needs its key first */
			return -1;
		}
		j->have_key = 0;
		return 0; /* the key wrote the separator */
	}
	if (top->items++ > 0)
		fputc(',', j->out);
	json_indent(j);
	return 0;
}

static void json_value_ends(cli_json *j)
{
	if (j->depth == 0)
		j->done = 1;
}

static void json_open(cli_json *j, char open, char close)
{
	if (json_value_begins(j) < 0)
		return;
	if (j->depth == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 8;
		json_level *grown = realloc(j->stack, cap * sizeof *grown);
		if (grown == NULL) {
			j->error = 1;
			return;
		}
		j->stack = grown;
		j->cap = cap;
	}
	j->stack[j->depth++] = (json_level){close, 0};
	fputc(open, j->out);
}

void cli_json_object(cli_json *j)
{
	json_open(j, '{', '}');
}

void cli_json_array(cli_json *j)
{
	json_open(j, '[', ']');
}

void cli_json_close(cli_json *j)
{
	json_level top;

	if (j == NULL || j->error)
		return;
	if (j->depth == 0 || j->have_key) {
		j->error = 1; /* nothing open, or a key without its value */
		return;
	}
	top = j->stack[--j->depth];
	if (top.items > 0)
		json_indent(j);
	fputc(top.close, j->out);
	json_value_ends(j);
}

void cli_json_key(cli_json *j, const char *key)
{
	json_level *top;

	if (j == NULL || j->error)
		return;
	if (j->depth == 0 || j->stack[j->depth - 1].close != '}' || j->have_key || key == NULL) {
		j->error = 1;
		return;
	}
	top = &j->stack[j->depth - 1];
	if (top->items++ > 0)
		fputc(',', j->out);
	json_indent(j);
	cli_json_string(j->out, key);
	fputs(": ", j->out);
	j->have_key = 1;
}

/* Writes one scalar already formatted, or through the escaper when it is a string. */
static void json_scalar(cli_json *j, const char *text)
{
	if (json_value_begins(j) < 0)
		return;
	fputs(text, j->out);
	json_value_ends(j);
}

void cli_json_str(cli_json *j, const char *s)
{
	if (json_value_begins(j) < 0)
		return;
	cli_json_string(j->out, s);
	json_value_ends(j);
}

void cli_json_num(cli_json *j, double v)
{
	char buf[64] = "null";

	if (isfinite(v))
		format_real(buf, sizeof buf, v, 17);
	json_scalar(j, buf);
}

void cli_json_fixed(cli_json *j, double v, int decimals)
{
	char buf[400] = "null"; /* %.30f of DBL_MAX */

	if (isfinite(v))
		format_fixed(buf, sizeof buf, v, decimals);
	json_scalar(j, buf);
}

void cli_json_int(cli_json *j, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	json_scalar(j, buf);
}

void cli_json_uint(cli_json *j, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRIu64, v);
	json_scalar(j, buf);
}

void cli_json_bool(cli_json *j, int v)
{
	json_scalar(j, v ? "true" : "false");
}

void cli_json_null(cli_json *j)
{
	json_scalar(j, "null");
}

int cli_json_end(cli_json *j)
{
	int rc;

	if (j == NULL)
		return -1;
	if (j->have_key) /* a key without a value cannot be closed into valid JSON */
		j->error = 1;
	while (!j->error && j->depth > 0)
		cli_json_close(j);
	if (!j->error && !j->done)
		j->error = 1; /* nothing was written: no JSON text at all */
	if (!j->error)
		fputc('\n', j->out);
	rc = j->error || ferror(j->out) ? -1 : 0;
	free(j->stack);
	free(j);
	return rc;
}

/* ---- tables ---------------------------------------------------------------------------------- */

typedef enum cell_kind { CELL_MISSING, CELL_TEXT, CELL_INT, CELL_UINT, CELL_REAL, CELL_BOOL } cell_kind;

typedef struct cell {
	cell_kind kind;
	union {
		char *s;
		int64_t i;
		uint64_t u;
		double d;
	} v;
} cell;

struct cli_table {
	cli_column *columns;
	size_t n_columns;
	cell *cells; /* row-major, n_cells of them, the last row perhaps incomplete */
	size_t n_cells, cap_cells;
	char **comments;
	size_t n_comments;
	int failed;
};

cli_table *cli_table_new(const cli_column *columns, size_t n_columns)
{
	cli_table *t;

	if (columns == NULL || n_columns == 0)
		return NULL;
	t = calloc(1, sizeof *t);
	if (t == NULL || (t->columns = malloc(n_columns * sizeof *columns)) == NULL) {
		free(t);
		return NULL;
	}
	memcpy(t->columns, columns, n_columns * sizeof *columns);
	t->n_columns = n_columns;
	return t;
}

void cli_table_free(cli_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n_cells; i++)
		if (t->cells[i].kind == CELL_TEXT)
			free(t->cells[i].v.s);
	for (size_t i = 0; i < t->n_comments; i++)
		free(t->comments[i]);
	free(t->comments);
	free(t->cells);
	free(t->columns);
	free(t);
}

int cli_table_comment(cli_table *t, const char *fmt, ...)
{
	va_list ap;
	char *line, **grown;
	int n;

	if (t == NULL || t->failed)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	line = n < 0 ? NULL : malloc((size_t)n + 1);
	grown = line ? realloc(t->comments, (t->n_comments + 1) * sizeof *grown) : NULL;
	if (grown == NULL) {
		free(line);
		t->failed = 1;
		return -1;
	}
	va_start(ap, fmt);
	vsnprintf(line, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->comments = grown;
	t->comments[t->n_comments++] = line;
	return 0;
}

/* Appends c if the next column takes kind; the table fails (and c's text is freed) otherwise. */
static int add_cell(cli_table *t, cell c)
{
	cli_column_kind col;
	int fits;

	if (t == NULL || t->failed)
		goto fail;
	col = t->columns[t->n_cells % t->n_columns].kind;
	fits = c.kind == CELL_MISSING || (c.kind == CELL_TEXT && col == CLI_COL_TEXT) ||
	       ((c.kind == CELL_INT || c.kind == CELL_UINT) && col == CLI_COL_INT) ||
	       (c.kind == CELL_REAL && (col == CLI_COL_FIXED || col == CLI_COL_REAL)) ||
	       (c.kind == CELL_BOOL && col == CLI_COL_BOOL);
	if (!fits)
		goto fail;
	if (t->n_cells == t->cap_cells) {
		size_t cap = t->cap_cells ? 2 * t->cap_cells : 64;
		cell *grown = realloc(t->cells, cap * sizeof *grown);
		if (grown == NULL)
			goto fail;
		t->cells = grown;
		t->cap_cells = cap;
	}
	t->cells[t->n_cells++] = c;
	return 0;
fail:
	if (c.kind == CELL_TEXT)
		free(c.v.s);
	if (t)
		t->failed = 1;
	return -1;
}

int cli_table_text(cli_table *t, const char *s)
{
	cell c = {CELL_TEXT, {.s = NULL}};

	if (s == NULL)
		return cli_table_missing(t);
	if ((c.v.s = strdup(s)) == NULL) {
		if (t)
			t->failed = 1;
		return -1;
	}
	return add_cell(t, c);
}

int cli_table_int(cli_table *t, int64_t v)
{
	return add_cell(t, (cell){CELL_INT, {.i = v}});
}

int cli_table_uint(cli_table *t, uint64_t v)
{
	return add_cell(t, (cell){CELL_UINT, {.u = v}});
}

int cli_table_real(cli_table *t, double v)
{
	if (isnan(v)) {
		/* still a real cell: a NaN in a text column is the same mistake as 1.5 there */
		if (t && !t->failed && t->columns[t->n_cells % t->n_columns].kind == CLI_COL_TEXT) {
			t->failed = 1;
			return -1;
		}
		return cli_table_missing(t);
	}
	return add_cell(t, (cell){CELL_REAL, {.d = v}});
}

int cli_table_bool(cli_table *t, int v)
{
	return add_cell(t, (cell){CELL_BOOL, {.i = v != 0}});
}

int cli_table_missing(cli_table *t)
{
	return add_cell(t, (cell){CELL_MISSING, {.s = NULL}});
}

size_t cli_table_rows(const cli_table *t)
{
	return t ? t->n_cells / t->n_columns : 0;
}

/* 1234567 -> "1,234,567" */
static void group_digits(char *buf, size_t size)
{
	size_t len = strlen(buf), digits = len - (buf[0] == '-'), commas = (digits - 1) / 3;
	char *src, *dst;

	if (commas == 0 || len + commas >= size)
		return;
	src = buf + len;
	dst = buf + len + commas;
	for (size_t d = 0; dst > src; d++) {
		*dst-- = *src--; /* the NUL first, then digits from the right */
		if (d > 0 && d % 3 == 0 && dst > src)
			*dst-- = ',';
	}
}

/*
 * A cell's text: the table's form (`human`: grouped digits, REAL at its
 * significant digits) or the form CSV and JSON use (plain digits, REAL to
 * round-trip).  NULL for a missing cell; text cells point into the table.
 */
static const char *cell_text(const cli_column *col, const cell *c, int human, char *buf,
			     size_t size)
{
	switch (c->kind) {
	case CELL_TEXT:
		return c->v.s;
	case CELL_BOOL:
		return c->v.i ? "true" : "false";
	case CELL_INT:
		snprintf(buf, size, "%" PRId64, c->v.i);
		break;
	case CELL_UINT:
		snprintf(buf, size, "%" PRIu64, c->v.u);
		break;
	case CELL_REAL:
		if (!isfinite(c->v.d))
			snprintf(buf, size, "%s", c->v.d > 0 ? "inf" : "-inf");
		else if (col->kind == CLI_COL_FIXED)
			format_fixed(buf, size, c->v.d, col->decimals);
		else
			format_real(buf, size, c->v.d, human ? col->decimals : 17);
		return buf;
	default:
		return NULL;
	}
	if (human && col->group)
		group_digits(buf, size);
	return buf;
}

#define CELL_BUF 400 /* %.30f of DBL_MAX and its sign */

static const char *missing_text(const cli_column *col)
{
	return col->missing ? col->missing : "-";
}

static const char *title_of(const cli_column *col)
{
	return col->title ? col->title : col->key;
}

/* Text for a people's table: control bytes (a newline would break the rows) shown as '?'. */
static void put_plain(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* Writes s padded to width on the side its kind aligns to; returns the blanks owed after it. */
static size_t put_aligned(FILE *out, const char *s, size_t width, int right)
{
	size_t w = cli_text_width(s), pad = width > w ? width - w : 0;

	if (right)
		fprintf(out, "%*s", (int)pad, "");
	put_plain(out, s);
	return right ? 0 : pad;
}

static int print_aligned(const cli_table *t, FILE *out)
{
	size_t rows = cli_table_rows(t), *width = calloc(t->n_columns, sizeof *width);
	char buf[CELL_BUF];

	if (width == NULL)
		return -1;
	for (size_t c = 0; c < t->n_columns; c++)
		width[c] = cli_text_width(title_of(&t->columns[c]));
	for (size_t i = 0; i < rows * t->n_columns; i++) {
		const cli_column *col = &t->columns[i % t->n_columns];
		const char *s = cell_text(col, &t->cells[i], 1, buf, sizeof buf);
		size_t w = cli_text_width(s ? s : missing_text(col));
		if (w > width[i % t->n_columns])
			width[i % t->n_columns] = w;
	}
	for (size_t i = 0; i < t->n_comments; i++) {
		/* one '#' per line, so a comment with a newline stays a comment */
		for (const char *p = t->comments[i];;) {
			size_t n = strcspn(p, "\n");
			while (n > 0 && p[n - 1] == ' ')
				n--;
			fprintf(out, "#%s%.*s\n", n ? " " : "", (int)n, p);
			p += strcspn(p, "\n");
			if (*p++ == '\0')
				break;
		}
	}
	for (size_t r = 0; r <= rows; r++) {
		size_t owed = 0; /* left-aligned padding, written only when more text follows */
		for (size_t c = 0; c < t->n_columns; c++) {
			const cli_column *col = &t->columns[c];
			const char *s = r == 0
					    ? title_of(col)
					    : cell_text(col, &t->cells[(r - 1) * t->n_columns + c],
							1, buf, sizeof buf);
			if (s == NULL)
				s = missing_text(col);
			if (c > 0)
				owed += 2;
			if (col->kind != CLI_COL_TEXT) {
				fprintf(out, "%*s", (int)owed, "");
				owed = put_aligned(out, s, width[c], 1);
			} else if (*s) {
				fprintf(out, "%*s", (int)owed, "");
				owed = put_aligned(out, s, width[c], 0);
			} else {
				owed += width[c];
			}
		}
		fputc('\n', out);
	}
	free(width);
	return 0;
}

static void print_csv(const cli_table *t, FILE *out)
{
	size_t rows = cli_table_rows(t);
	char buf[CELL_BUF];

	for (size_t c = 0; c < t->n_columns; c++) {
		if (c)
			fputc(',', out);
		cli_csv_field(out, t->columns[c].key);
	}
	fputc('\n', out);
	for (size_t i = 0; i < rows * t->n_columns; i++) {
		const cli_column *col = &t->columns[i % t->n_columns];
		if (i % t->n_columns)
			fputc(',', out);
		cli_csv_field(out, cell_text(col, &t->cells[i], 0, buf, sizeof buf));
		if ((i + 1) % t->n_columns == 0)
			fputc('\n', out);
	}
}

void cli_table_json(const cli_table *t, cli_json *j)
{
	size_t rows = cli_table_rows(t);
	char buf[CELL_BUF];

	if (j == NULL)
		return;
	if (t == NULL || t->failed || t->n_cells % t->n_columns != 0) {
		j->error = 1;
		return;
	}
	cli_json_array(j);
	for (size_t r = 0; r < rows; r++) {
		cli_json_object(j);
		for (size_t c = 0; c < t->n_columns; c++) {
			const cli_column *col = &t->columns[c];
			const cell *x = &t->cells[r * t->n_columns + c];
			cli_json_key(j, col->key);
			if (x->kind == CELL_TEXT)
				cli_json_str(j, x->v.s);
			else if (x->kind == CELL_MISSING ||
				 (x->kind == CELL_REAL && !isfinite(x->v.d)))
				cli_json_null(j);
			else
				json_scalar(j, cell_text(col, x, 0, buf, sizeof buf));
		}
		cli_json_close(j);
	}
	cli_json_close(j);
}

int cli_table_print(const cli_table *t, cli_format format, FILE *out)
{
	cli_json *j;

	if (t == NULL || t->failed || t->n_cells % t->n_columns != 0)
		return -1; /* a failed cell, or a row left unfinished */
	switch (format) {
	case CLI_FORMAT_TABLE:
		if (print_aligned(t, out) < 0)
			return -1;
		break;
	case CLI_FORMAT_CSV:
		print_csv(t, out);
		break;
	case CLI_FORMAT_JSON:
		if ((j = cli_json_new(out)) == NULL)
			return -1;
		cli_table_json(t, j);
		if (cli_json_end(j) < 0)
			return -1;
		break;
	default:
		return -1;
	}
	return ferror(out) ? -1 : 0;
}

void cli_table_html(const cli_table *t, FILE *out)
{
	size_t rows = cli_table_rows(t);
	char buf[CELL_BUF];

	if (t == NULL)
		return;
	fputs("<table class=\"data\">\n", out);
	if (t->n_comments) {
		fputs("<caption>", out);
		for (size_t i = 0; i < t->n_comments; i++) {
			if (i)
				fputs("<br/>", out);
			cli_xml_text(out, t->comments[i]);
		}
		fputs("</caption>\n", out);
	}
	fputs("<thead><tr>", out);
	for (size_t c = 0; c < t->n_columns; c++) {
		fputs(t->columns[c].kind == CLI_COL_TEXT ? "<th>" : "<th class=\"num\">", out);
		cli_xml_text(out, title_of(&t->columns[c]));
		fputs("</th>", out);
	}
	fputs("</tr></thead>\n<tbody>\n", out);
	for (size_t r = 0; r < rows; r++) {
		fputs("<tr>", out);
		for (size_t c = 0; c < t->n_columns; c++) {
			const cli_column *col = &t->columns[c];
			const char *s =
			    cell_text(col, &t->cells[r * t->n_columns + c], 1, buf, sizeof buf);
			if (col->kind == CLI_COL_TEXT)
				fputs(s ? "<td>" : "<td class=\"missing\">", out);
			else
				fputs(s ? "<td class=\"num\">" : "<td class=\"num missing\">", out);
			cli_xml_text(out, s ? s : missing_text(col));
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody>\n</table>\n", out);
}

/* ---- whole outputs --------------------------------------------------------------------------- */

int cli_memout_open(cli_memout *m)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	return m->f ? 0 : -1;
}

int cli_memout_close(cli_memout *m)
{
	int bad;

	if (m->f == NULL)
		return -1;
	bad = ferror(m->f);
	bad |= fclose(m->f) != 0;
	m->f = NULL;
	return bad ? -1 : 0;
}

/*
 * Standard output is written through stdio, after what the command already
 * printed there; a file goes through mpxkit_outfile (whole or not at all).
 */
int cli_write_file(const char *cmd, const char *path, const char *text, size_t len)
{
	mpxkit_diag diag = {0};
	int rc;

	if (path == NULL || strcmp(path, "-") == 0) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
			return cli_error(cmd, "cannot write to standard output: %s",
					 strerror(errno));
		return CLI_OK;
	}
	rc = mpxkit_outfile_write_all(path, text, len, &diag);
	return rc < 0 ? cli_lib_error(cmd, rc, &diag) : CLI_OK;
}

int cli_table_emit(const char *cmd, const cli_table *t, cli_format format, const char *path)
{
	cli_memout m;
	int rc;

	if (cli_memout_open(&m) < 0)
		return cli_error(cmd, "out of memory");
	rc = cli_table_print(t, format, m.f);
	if ((cli_memout_close(&m) < 0) | (rc < 0)) {
		free(m.text);
		return cli_error(cmd, "out of memory");
	}
	rc = cli_write_file(cmd, path, m.text, m.len);
	free(m.text);
	return rc;
}
