/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes every chart kind of utils/svg.h to DIR, alone and together in one HTML page, for the
 * checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "svg.h"

/* Labels that need every escape: markup, quotes, a control byte, UTF-8 and a stray byte. */
#define NASTY "a<b>&c \"q\" 'r' \x01 \xc3\xa9t\xc3\xa9 \xff end"

#define N 50

static double xs[N], ys[3][N], preds[N];
static unsigned char flagged[N];

static void fill(void)
{
	for (int k = 0; k < N; k++) {
		xs[k] = 1000.0 * k;
		ys[0][k] = 1e6 * (1.0 + sin(k / 5.0));
		ys[1][k] = k % 17 == 5 ? NAN : 1e6 * (1.0 + cos(k / 7.0));
		ys[2][k] = k == 20 ? 3e6 : NAN; /* a lone point between gaps */
		preds[k] = ys[0][k] * (1.0 + 0.1 * sin(k));
		flagged[k] = fabs(preds[k] - ys[0][k]) > 0.08 * ys[0][k];
	}
}

static void lines(FILE *f, int log_y)
{
	const cli_series s[] = {
	    {"measured", xs, ys[0], N, 0, NULL},
	    {NASTY, xs, ys[1], N, 2, NULL},
	    {NULL, xs, ys[2], N, 0, NULL},
	    {"rings on a line", xs, preds, N, 0, flagged},
	};
	const cli_chart c = {log_y ? "Counts per rotation (log)" : "Counts & " NASTY,
			     "rotation",
			     "count",
			     0,
			     0,
			     log_y,
			     0};
	cli_svg_lines(f, &c, s, 4);
}

static void scatter(FILE *f, int log_y)
{
	const cli_series s[] = {{"kernels", ys[0], preds, N, 1, flagged}};
	const cli_chart c = {"Predicted against measured: " NASTY,
			     "measured (s)",
			     "predicted (s)",
			     720,
			     720,
			     log_y,
			     1};
	cli_svg_lines(f, &c, s, 1);
}

static void bars(FILE *f, int normalise)
{
	static const char *const cats[] = {"kernel_a", NASTY, "idle", "a much longer category"};
	static const char *const parts[] = {"compute", "memory", "latency <hidden>"};
	static const double v[] = {3, 1, 0.5, 0, 2, 2, 0, 0, 0, 1e3, NAN, 7};
	const cli_chart c = {"Time by bound", "seconds", "kernel", 0, 0, 0, 0};
	cli_svg_bars(f, &c, cats, 4, parts, 3, v, normalise);
}

static void heat(FILE *f, int log_scale, size_t rows, size_t cols)
{
	static const char *const row_labels[] = {"main", "solve", NASTY, "io"};
	double *v = malloc(rows * cols * sizeof *v);
	unsigned char *fl = calloc(rows * cols, 1);
	const char **rl = calloc(rows, sizeof *rl), **cl = calloc(cols, sizeof *cl);
	char(*names)[16] = calloc(cols, sizeof *names);

	if (v == NULL || fl == NULL || rl == NULL || cl == NULL || names == NULL) {
		fputs("output_charts: out of memory\n", stderr);
		exit(2);
	}
	for (size_t r = 0; r < rows; r++) {
		rl[r] = row_labels[r % 4];
		for (size_t c = 0; c < cols; c++) {
			v[r * cols + c] = (r + 1) * (c % 7 == 3 ? 1e4 : (double)c);
			fl[r * cols + c] = (r + c) % 11 == 0;
		}
	}
	v[1] = NAN;
	for (size_t c = 0; c < cols; c++) {
		snprintf(names[c], sizeof names[c], "t=%zu ms", c * 10);
		cl[c] = names[c];
	}
	{
		const cli_heatmap h = {
		    "Misses over time: " NASTY,	   rl, rows, cl, cols, v, fl, 0, 0, log_scale,
		    "misses per 1000 instructions"};
		cli_svg_heatmap(f, &h);
	}
	free(v), free(fl), free(rl), free(cl), free(names);
}

static void heat_sized(FILE *f, int large)
{
	if (large)
		heat(f, 1, 24, 200);
	else
		heat(f, 0, 4, 12);
}

/* Every chart kind, each with the setting that changes how it is drawn. */
static const struct {
	const char *name;
	void (*draw)(FILE *f, int setting);
	int setting;
} kinds[] = {
    {"lines", lines, 0},     {"lines_log", lines, 1},
    {"scatter", scatter, 0}, {"scatter_log", scatter, 1},
    {"bars", bars, 0},	     {"bars_norm", bars, 1},
    {"heat", heat_sized, 0}, {"heat_log_large", heat_sized, 1},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static int write_out(const char *dir, const char *name, cli_memout *m)
{
	char path[4096];
	int rc;

	if (cli_memout_close(m) < 0)
		return 2;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	rc = cli_write_file("output_charts", path, m->text, m->len);
	free(m->text);
	return rc;
}

static int write_page(const char *dir)
{
	static const cli_column cols[] = {
	    {"chart", "chart", CLI_COL_TEXT, 0, 0, NULL},
	    {"bytes", "SVG bytes", CLI_COL_INT, 0, 1, NULL},
	    {"share", "share", CLI_COL_FIXED, 1, 0, "n/a"},
	};
	cli_table *t = cli_table_new(cols, 3);
	cli_memout m;
	int rc;

	if (t == NULL || cli_memout_open(&m) < 0)
		return 2;
	cli_html_begin(m.f, "Every chart: " NASTY);
	cli_html_paragraph(m.f, "Each chart below is inline SVG; " NASTY);
	for (size_t k = 0; k < N_KINDS; k++) {
		cli_html_heading(m.f, 2, kinds[k].name);
		kinds[k].draw(m.f, kinds[k].setting);
		cli_table_text(t, kinds[k].name);
		cli_table_int(t, 1234567 * (int64_t)(k + 1));
		cli_table_real(t, k == 3 ? NAN : 12.5 * k);
	}
	cli_table_comment(t, "a table: %s", NASTY);
	cli_table_html(t, m.f);
	cli_table_free(t);
	cli_html_end(m.f);
	rc = write_out(dir, "page.html", &m);
	return rc;
}

/* Charts with nothing or almost nothing to show still make valid SVG. */
static int write_edges(const char *dir)
{
	static const double one = 5, nan1 = NAN, neg[2] = {-3, 2};
	const cli_series lone[] = {{"one point", NULL, &one, 1, 0, NULL},
				   {"only a gap", NULL, &nan1, 1, 2, NULL},
				   {"empty", NULL, NULL, 0, 1, NULL}};
	const cli_series negative[] = {{"negative on a log axis", neg, neg, 2, 2, NULL}};
	const cli_chart bare = {NULL, NULL, NULL, 300, 200, 0, 0};
	const cli_chart log_diag = {"log", NULL, NULL, 0, 0, 1, 1};
	const cli_heatmap empty_heat = {NULL, NULL, 0, NULL, 0, NULL, NULL, 0, 0, 0, NULL};
	const cli_heatmap flat_heat = {"flat", NULL, 1, NULL, 1, &one, NULL, 0, 0, 1, NULL};
	for (int k = 0; k < 6; k++) {
		char name[64];
		cli_memout m;
		int rc;
		if (cli_memout_open(&m) < 0)
			return 2;
		cli_svg_document(m.f);
		if (k == 0)
			cli_svg_lines(m.f, &bare, lone, 3);
		else if (k == 1)
			cli_svg_lines(m.f, &log_diag, negative, 1);
		else if (k == 2)
			cli_svg_lines(m.f, &bare, NULL, 0);
		else if (k == 3)
			cli_svg_bars(m.f, &bare, NULL, 0, NULL, 0, NULL, 1);
		else if (k == 4)
			cli_svg_heatmap(m.f, &empty_heat);
		else
			cli_svg_heatmap(m.f, &flat_heat);
		snprintf(name, sizeof name, "edge%d.svg", k);
		if ((rc = write_out(dir, name, &m)) != 0)
			return rc;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: output_charts DIR\n", stderr);
		return 1;
	}
	fill();
	for (size_t k = 0; k < N_KINDS; k++) {
		char name[64];
		cli_memout m;
		int rc;
		if (cli_memout_open(&m) < 0)
			return 2;
		cli_svg_document(m.f);
		kinds[k].draw(m.f, kinds[k].setting);
		snprintf(name, sizeof name, "%s.svg", kinds[k].name);
		if ((rc = write_out(argv[1], name, &m)) != 0)
			return rc;
	}
	if (write_edges(argv[1]) != 0)
		return 2;
	return write_page(argv[1]);
}
