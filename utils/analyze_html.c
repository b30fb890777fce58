/* SPDX-License-Identifier: BSD-3-Clause */
/* The analyze report: one self-contained page of findings, timeline, heat map, pattern graph and
 * thread lanes. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_html.h"
#include "cli.h"
#include "mpxkit/reader.h"
#include "svg.h"

#define MAX_ROWS     30 /* spaces in the timeline and the heat map */
#define MAX_THREADS  32 /* thread rows: past it, the costliest and one row for the rest */
#define MAX_NODES    16 /* spaces in the pattern graph */
#define MAX_SOURCE   10 /* findings whose source line is shown */
#define MAX_LABEL    48
#define SOURCE_BYTES (UINT64_C(64) << 20)

int cli_analyze_color_ok(const char *key)
{
	if (strcmp(key, "cost") == 0)
		return 1;
	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
		if (strcmp(key, mpxkit_spacetime_metric_key(m)) == 0)
			return 1;
	return 0;
}

/* "function:line", shortened to fit a chart's margin. */
static char *space_label(const mpxkit_spacetime_space *s)
{
	char buf[MAX_LABEL + 16];
	size_t n;

	snprintf(buf, sizeof buf, "%.*s", MAX_LABEL, s->function);
	n = strlen(s->function);
	if (n > MAX_LABEL)
		memcpy(buf + MAX_LABEL - 3, "...", 4);
	if (s->line)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":%" PRIu32, s->line);
	return strdup(buf);
}

static void free_labels(char **labels, size_t n)
{
	for (size_t i = 0; labels && i < n; i++)
		free(labels[i]);
	free(labels);
}

static char **space_labels(const mpxkit_spacetime *r, size_t n)
{
	char **labels = calloc(n ? n : 1, sizeof *labels);

	for (size_t k = 0; labels && k < n; k++)
		if ((labels[k] = space_label(&r->spaces[k])) == NULL) {
			free_labels(labels, k);
			return NULL;
		}
	return labels;
}

/* The first window of each bin, as column labels. */
static char **bin_labels(const mpxkit_spacetime *r)
{
	char **labels = calloc(r->n_bins ? r->n_bins : 1, sizeof *labels);

	for (size_t b = 0; labels && b < r->n_bins; b++) {
		char buf[24];
		snprintf(buf, sizeof buf, "%" PRIu64, r->bin_first_window[b]);
		if ((labels[b] = strdup(buf)) == NULL) {
			free_labels(labels, b);
			return NULL;
		}
	}
	return labels;
}

/* The metric the timeline shows: asked for, else the top finding's, else D1 misses, else cost. */
static int timeline_metric(const mpxkit_spacetime *r, const char *color_by)
{
	if (color_by != NULL) {
		for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
			if (strcmp(color_by, mpxkit_spacetime_metric_key(m)) == 0)
				return m;
		return -1;
	}
	for (size_t i = 0; i < r->n_findings; i++)
		if (r->findings[i].metric >= 0)
			return r->findings[i].metric;
	return isnan(r->metrics[MPXKIT_METRIC_D1_MPKI]) ? -1 : MPXKIT_METRIC_D1_MPKI;
}

/* ---- source lines ---------------------------------------------------------------------------- */

/* The text of line `line` of file, or NULL when the file cannot be read (caller frees). */
static char *source_line(const char *file, uint32_t line)
{
	const mpxkit_reader_options opt = {MPXKIT_READER_TEXT, SOURCE_BYTES, 0, "source file"};
	mpxkit_reader *rd = NULL;
	char *text;
	size_t len;
	char *copy = NULL;

	if (file == NULL || *file != '/' || line == 0 ||
	    mpxkit_reader_open(&rd, file, &opt, NULL) < 0)
		return NULL;
	while (mpxkit_reader_line(rd, &text, &len, NULL) == 1)
		if (mpxkit_reader_lineno(rd) == line) {
			copy = strndup(text, len);
			break;
		}
	mpxkit_reader_close(rd);
	return copy;
}

/* Each finding of one kind (the first MAX_SOURCE) with its direction and source line. */
static void write_sources(FILE *out, const mpxkit_spacetime *r, int advantage, const char *heading)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->n_findings && shown < MAX_SOURCE; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		char *text;
		if (f->advantage != advantage)
			continue;
		if (shown++ == 0)
			fprintf(out, "<h3>%s</h3>\n", heading);
		text = source_line(f->file, f->line);
		fprintf(out, "<p><b>%zu. ", i + 1);
		cli_xml_text(out, mpxkit_spacetime_class_name(f->cls));
		fputs("</b> in <code>", out);
		cli_xml_text(out, r->spaces[f->space].function);
		fputs("</code>", out);
		if (f->file && *f->file && strcmp(f->file, "???") != 0) {
			fputs(" at <code>", out);
			cli_xml_text(out, f->file);
			fprintf(out, ":%" PRIu32 "</code>", f->line);
		}
		fputs("<br/>", out);
		cli_xml_text(out, f->direction);
		fputs("</p>\n", out);
		if (text) {
			fprintf(out, "<pre>%6" PRIu32 " | ", f->line);
			cli_xml_text(out, text);
			fputs("</pre>\n", out);
		}
		free(text);
	}
}

/* ---- charts ---------------------------------------------------------------------------------- */

static int timeline(FILE *out, const mpxkit_spacetime *r, const char *color_by)
{
	size_t rows = r->n_spaces < MAX_ROWS ? r->n_spaces : MAX_ROWS, nb = r->n_bins;
	int metric = timeline_metric(r, color_by);
	double *values = malloc((rows ? rows : 1) * (nb ? nb : 1) * sizeof *values);
	unsigned char *flags = calloc((rows ? rows : 1) * (nb ? nb : 1), 1);
	char **rl = space_labels(r, rows), **cl = bin_labels(r), title[160];

	if (values == NULL || flags == NULL || rl == NULL || cl == NULL) {
		free(values);
		free(flags);
		free_labels(rl, rows);
		free_labels(cl, nb);
		return -1;
	}
	for (size_t k = 0; k < rows; k++)
		for (size_t b = 0; b < nb; b++) {
			double cost = mpxkit_spacetime_bin_cost(r, k, b);
			values[k * nb + b] = !(cost > 0) ? NAN
					     : metric < 0
						 ? 100 * cost
						 : mpxkit_spacetime_bin_metric(r, k, b, metric);
		}
	/* The phases of phase-change findings, outlined. */
	for (size_t i = 0; i < r->n_findings; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		if (f->scope != MPXKIT_SCOPE_PHASE || f->space >= rows)
			continue;
		for (size_t b = 0; b < nb; b++)
			if (r->bin_first_window[b] >= f->first_window &&
			    r->bin_first_window[b] <= f->last_window)
				flags[f->space * nb + b] = 1;
	}
	snprintf(title, sizeof title, "Timeline: code spaces against time, coloured by %s",
		 metric < 0 ? "share of the program's cost (%)"
			    : mpxkit_spacetime_metric_title(metric));
	cli_heatmap h = {title,
			 (const char *const *)rl,
			 rows,
			 (const char *const *)cl,
			 nb,
			 values,
			 flags,
			 0,
			 0,
			 1,
			 metric < 0 ? "% of cost" : mpxkit_spacetime_metric_title(metric)};
	cli_svg_heatmap(out, &h);
	free(values);
	free(flags);
	free_labels(rl, rows);
	free_labels(cl, nb);
	return 0;
}

/* Each space's metrics over the program's: > 1 worse, < 1 better; defects outlined. */
static int metric_map(FILE *out, const mpxkit_spacetime *r)
{
	size_t rows = r->n_spaces < MAX_ROWS ? r->n_spaces : MAX_ROWS, cols = 0;
	int keys[MPXKIT_SPACETIME_N_METRICS];
	const char *cl[MPXKIT_SPACETIME_N_METRICS];
	double *values;
	unsigned char *flags;
	char **rl;

	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
		if (r->metrics[m] > 0) {
			keys[cols] = m;
			cl[cols++] = mpxkit_spacetime_metric_key(m);
		}
	if (cols == 0 || rows == 0)
		return 0;
	values = malloc(rows * cols * sizeof *values);
	flags = calloc(rows * cols, 1);
	rl = space_labels(r, rows);
	if (values == NULL || flags == NULL || rl == NULL) {
		free(values);
		free(flags);
		free_labels(rl, rows);
		return -1;
	}
	for (size_t k = 0; k < rows; k++)
		for (size_t c = 0; c < cols; c++)
			values[k * cols + c] = r->spaces[k].metrics[keys[c]] / r->metrics[keys[c]];
	for (size_t i = 0; i < r->n_findings; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		for (size_t c = 0; c < cols; c++)
			if (!f->advantage && f->scope != MPXKIT_SCOPE_PROGRAM && f->space < rows &&
			    f->metric == keys[c])
				flags[f->space * cols + c] = 1;
	}
	cli_heatmap h = {"Each code space's metrics over the program's",
			 (const char *const *)rl,
			 rows,
			 cl,
			 cols,
			 values,
			 flags,
			 0,
			 0,
			 1,
			 "times the program's value"};
	cli_svg_heatmap(out, &h);
	free(values);
	free(flags);
	free_labels(rl, rows);
	return 0;
}

/* The transition's finding: 1 defect, 2 advantage, 0 none. */
static int edge_kind(const mpxkit_spacetime *r, size_t from, size_t to)
{
	for (size_t i = 0; i < r->n_findings; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		if (f->scope == MPXKIT_SCOPE_PATTERN && (size_t)f->after == from && f->space == to)
			return f->advantage ? 2 : 1;
	}
	return 0;
}

/*
 * The pattern graph: spaces on a circle, an arrow per transition, its width by its count; the
 * circle as large as its nodes need.  Without a transition there is nothing to draw: one line
 * says so (a profile whose threads each stay in one space, as one loop's does).
 */
static int pattern_graph(FILE *out, const mpxkit_spacetime *r)
{
	size_t *node_of_space, space_of[MAX_NODES], n = 0;
	double w, h, cx, cy, radius;
	uint64_t max = 1;

	if (r->n_patterns == 0) {
		cli_html_paragraph(
		    out, "No transitions: window by window, every thread stays in the same "
			 "selected code space (the timeline shows when each one runs).");
		return 0;
	}
	node_of_space = malloc((r->n_spaces ? r->n_spaces : 1) * sizeof *node_of_space);
	if (node_of_space == NULL)
		return -1;
	for (size_t k = 0; k < r->n_spaces; k++)
		node_of_space[k] = SIZE_MAX;
	/* The nodes: spaces of the most frequent transitions first. */
	for (size_t p = 0; p < r->n_patterns && n < MAX_NODES; p++) {
		size_t ends[2] = {r->patterns[p].from, r->patterns[p].to};
		for (int e = 0; e < 2 && n < MAX_NODES; e++)
			if (node_of_space[ends[e]] == SIZE_MAX) {
				node_of_space[ends[e]] = n;
				space_of[n++] = ends[e];
			}
		max = r->patterns[p].count > max ? r->patterns[p].count : max;
	}
	/* Room on the circle for a label per node; around it, for the labels of the nodes. */
	radius = n <= 2 ? 110 : 60 + 12.0 * (double)n;
	w = 900;
	h = 2 * radius + 150;
	cx = w / 2;
	cy = h / 2 + 15;
	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
		w, h, w, h);
	fprintf(
	    out,
	    "<text x=\"20\" y=\"28\" font-size=\"15\">Patterns: which code spaces follow "
	    "which (per thread, window by window); red: a defect after the transition</text>\n");
	double x[MAX_NODES], y[MAX_NODES];
	for (size_t i = 0; i < n; i++) {
		double a = 2 * M_PI * (double)i / (double)n - M_PI / 2;
		x[i] = cx + radius * cos(a);
		y[i] = cy + radius * sin(a);
	}
	for (size_t p = 0; p < r->n_patterns; p++) {
		const mpxkit_spacetime_pattern *pt = &r->patterns[p];
		size_t a, b;
		a = node_of_space[pt->from];
		b = node_of_space[pt->to];
		if (a == SIZE_MAX || b == SIZE_MAX)
			continue;
		int kind = edge_kind(r, pt->from, pt->to);
		const char *colour = kind == 1 ? "#d00000" : kind == 2 ? "#1a9850" : "#777777";
		double width = 1 + 5 * log1p((double)pt->count) / log1p((double)max);
		/* A bend to the right, so the two directions between a pair do not overlap. */
		double mx = (x[a] + x[b]) / 2, my = (y[a] + y[b]) / 2, dx = x[b] - x[a],
		       dy = y[b] - y[a], len = sqrt(dx * dx + dy * dy);
		if (!(len > 0))
			continue;
		double qx = mx - dy / len * 40, qy = my + dx / len * 40;
		/* The arrowhead sits before the target node's circle. */
		double tx = x[b] - (x[b] - qx) /
				       sqrt((x[b] - qx) * (x[b] - qx) + (y[b] - qy) * (y[b] - qy)) *
				       16;
		double ty = y[b] - (y[b] - qy) /
				       sqrt((x[b] - qx) * (x[b] - qx) + (y[b] - qy) * (y[b] - qy)) *
				       16;
		double ux = (tx - qx), uy = (ty - qy), ul = sqrt(ux * ux + uy * uy);
		ux /= ul;
		uy /= ul;
		fprintf(out, "<g><title>%" PRIu64 " transitions: ", pt->count);
		cli_xml_text(out, r->spaces[pt->from].function);
		fputs(" then ", out);
		cli_xml_text(out, r->spaces[pt->to].function);
		fprintf(out,
			"</title><path d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" "
			"stroke=\"%s\" stroke-width=\"%.1f\" stroke-opacity=\"0.8\"/>"
			"<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/></g>\n",
			x[a], y[a], qx, qy, tx, ty, colour, width, tx, ty, tx - 10 * ux - 5 * uy,
			ty - 10 * uy + 5 * ux, tx - 10 * ux + 5 * uy, ty - 10 * uy - 5 * ux,
			colour);
	}
	for (size_t i = 0; i < n; i++) {
		char *label = space_label(&r->spaces[space_of[i]]), colour[8];
		cli_svg_colour(space_of[i], colour);
		fprintf(
		    out,
		    "<g><title>%.1f %% of the cost</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"12\" "
		    "fill=\"%s\" stroke=\"#333\"/></g>\n",
		    100 * r->spaces[space_of[i]].cost_share, x[i], y[i], colour);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x[i],
			y[i] + (y[i] > cy ? 28 : -18),
			x[i] < cx - 10	 ? "end"
			: x[i] > cx + 10 ? "start"
					 : "middle");
		cli_xml_text(out, label ? label : "");
		fputs("</text>\n", out);
		free(label);
	}
	fputs("</svg>\n", out);
	free(node_of_space);
	return 0;
}

/*
 * The thread rows: every thread up to MAX_THREADS, else the MAX_THREADS - 1 costliest in their
 * own order and one row for the mean of the others, so the page's height does not grow with
 * the threads (5,000 made a chart 120,110 px tall); VTune and FlameGraph merge what would not
 * fit the same way.
 */
typedef struct thread_rows {
	size_t n;	       /* rows drawn, the last one the others' mean when rest > 0 */
	size_t *index;	       /* n - (rest > 0): the threads drawn one by one */
	size_t rest;	       /* threads merged into the last row */
	unsigned char *merged; /* n_threads: 1 for the threads of the last row */
} thread_rows;

typedef struct costly {
	double cost;
	size_t index;
} costly;

static int by_cost(const void *a, const void *b)
{
	const costly *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int by_index(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	return i < j ? -1 : i > j;
}

static int thread_rows_of(const mpxkit_spacetime *r, thread_rows *rows)
{
	size_t nt = r->n_threads, keep = nt <= MAX_THREADS ? nt : MAX_THREADS - 1;
	costly *order = malloc((nt ? nt : 1) * sizeof *order);

	rows->index = malloc((nt ? nt : 1) * sizeof *rows->index);
	rows->merged = calloc(nt ? nt : 1, 1);
	if (order == NULL || rows->index == NULL || rows->merged == NULL) {
		free(order);
		return -1;
	}
	for (size_t t = 0; t < nt; t++)
		order[t] = (costly){r->threads[t].cost_share, t};
	if (keep < nt)
		qsort(order, nt, sizeof *order, by_cost);
	for (size_t k = 0; k < nt; k++) {
		if (k < keep)
			rows->index[k] = order[k].index;
		else
			rows->merged[order[k].index] = 1;
	}
	qsort(rows->index, keep, sizeof *rows->index, by_index);
	free(order);
	rows->rest = nt - keep;
	rows->n = keep + (rows->rest > 0);
	return 0;
}

/* Row k's cost share in bin b (NaN: the thread did not run) and whether it mostly waited. */
static double lane_value(const mpxkit_spacetime *r, const thread_rows *rows, size_t k, size_t b,
			 unsigned char *flag)
{
	double c = 0, wt = 0, n = 1;

	if (k + 1 == rows->n && rows->rest > 0) {
		for (size_t t = 0; t < r->n_threads; t++)
			if (rows->merged[t]) {
				c += r->threads[t].bin_cost[b];
				wt += r->threads[t].bin_wait[b];
			}
		n = (double)rows->rest;
	} else {
		c = r->threads[rows->index[k]].bin_cost[b];
		wt = r->threads[rows->index[k]].bin_wait[b];
	}
	*flag = c > 0 && wt > 0.5 * c;
	return c > 0 && r->cost > 0 ? 100 * c / r->cost / n : NAN;
}

/* Row k's share of the program's cost in space s, as a percentage (the others': their mean). */
static double lane_share(const mpxkit_spacetime *r, const thread_rows *rows, size_t k, size_t s)
{
	double sum = 0;

	if (k + 1 < rows->n || rows->rest == 0)
		return 100 * r->spaces[s].thread_share[rows->index[k]];
	for (size_t t = 0; t < r->n_threads; t++)
		if (rows->merged[t])
			sum += r->spaces[s].thread_share[t];
	return 100 * sum / (double)rows->rest;
}

/* Threads against time, coloured by their cost; cells where a thread mostly waited outlined. */
static int thread_lanes(FILE *out, const mpxkit_spacetime *r)
{
	size_t nb = r->n_bins, rows = r->n_spaces < MAX_ROWS ? r->n_spaces : MAX_ROWS, nt = 0;
	thread_rows tr = {0, NULL, 0, NULL};
	double *values = NULL, *shares = NULL;
	unsigned char *flags = NULL;
	char **tl = NULL, **cl = bin_labels(r), **sl = space_labels(r, rows);
	int rc = 0;

	if (thread_rows_of(r, &tr) < 0 || cl == NULL || sl == NULL) {
		rc = -1;
		goto done;
	}
	nt = tr.n;
	values = malloc((nt ? nt : 1) * (nb ? nb : 1) * sizeof *values);
	flags = calloc((nt ? nt : 1) * (nb ? nb : 1), 1);
	tl = calloc(nt ? nt : 1, sizeof *tl);
	shares = calloc((nt ? nt : 1) * (rows ? rows : 1), sizeof *shares);
	if (values == NULL || flags == NULL || tl == NULL || shares == NULL) {
		rc = -1;
		goto done;
	}
	if (tr.rest > 0) {
		char buf[256];
		snprintf(
		    buf, sizeof buf,
		    "%zu threads: the %zu costliest are drawn one by one, the other %zu as one "
		    "row of their mean.",
		    r->n_threads, nt - 1, tr.rest);
		cli_html_paragraph(out, buf);
	}
	for (size_t k = 0; k < nt; k++) {
		char buf[64];
		if (k + 1 == nt && tr.rest > 0)
			snprintf(buf, sizeof buf, "%zu other threads (mean)", tr.rest);
		else
			snprintf(buf, sizeof buf, "thread %" PRIu64, r->threads[tr.index[k]].tid);
		if ((tl[k] = strdup(buf)) == NULL) {
			rc = -1;
			goto done;
		}
		for (size_t b = 0; b < nb; b++)
			values[k * nb + b] = lane_value(r, &tr, k, b, &flags[k * nb + b]);
		for (size_t s = 0; s < rows; s++)
			shares[k * rows + s] = lane_share(r, &tr, k, s);
	}
	cli_heatmap h = {"Threads over time: share of the cost (outlined: mostly waiting)",
			 (const char *const *)tl,
			 nt,
			 (const char *const *)cl,
			 nb,
			 values,
			 flags,
			 0,
			 0,
			 1,
			 "% of the program's cost"};
	cli_svg_heatmap(out, &h);
	if (rows > 0) {
		cli_chart c = {"Each thread's cost per code space",
			       "% of the program's cost",
			       "thread",
			       0,
			       0,
			       0,
			       0};
		cli_svg_bars(out, &c, (const char *const *)tl, nt, (const char *const *)sl, rows,
			     shares, 0);
	}
done:
	free(values);
	free(flags);
	free_labels(tl, tl ? nt : 0);
	free_labels(cl, nb);
	free_labels(sl, rows);
	free(shares);
	free(tr.index);
	free(tr.merged);
	return rc;
}

/*
 * The defects' shares as bars, worst first: what to look at, at a glance.  The code's in the
 * palette's second colour, an orange red; the whole program's (past the top-down thresholds) in
 * its third, a blue (the first, black, is not used: the legend names only what is drawn).
 */
static int share_bars(FILE *out, const mpxkit_spacetime *r)
{
	size_t n = 0;
	char **labels = calloc(MAX_SOURCE, sizeof *labels);
	double *values = calloc(3 * MAX_SOURCE, sizeof *values);
	const char *parts[] = {"", "code, against its reference", "whole program, past a threshold"};
	int rc = 0;

	if (labels == NULL || values == NULL) {
		rc = -1;
		goto done;
	}
	for (size_t i = 0; i < r->n_findings && n < MAX_SOURCE; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		char buf[160];
		if (f->advantage)
			continue;
		snprintf(buf, sizeof buf, "%zu. %s %.40s%s", i + 1,
			 mpxkit_spacetime_class_name(f->cls), r->spaces[f->space].function,
			 f->scope == MPXKIT_SCOPE_PROGRAM ? " (program)" : "");
		if ((labels[n] = strdup(buf)) == NULL) {
			rc = -1;
			goto done;
		}
		values[3 * n + (f->scope == MPXKIT_SCOPE_PROGRAM ? 2 : 1)] = 100 * f->share;
		n++;
	}
	if (n > 0) {
		cli_chart c = {"The defects: the share of the program's cost each explains",
			       "% of the program's cost",
			       "defect",
			       0,
			       0,
			       0,
			       0};
		cli_svg_bars(out, &c, (const char *const *)labels, n, parts, 3, values, 0);
	}
done:
	free_labels(labels, n);
	free(values);
	return rc;
}

/* ---- the page -------------------------------------------------------------------------------- */

static size_t count_defects(const mpxkit_spacetime *r, int program)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_findings; i++)
		n += !r->findings[i].advantage &&
		     (!program || r->findings[i].scope == MPXKIT_SCOPE_PROGRAM);
	return n;
}

static void summary(FILE *out, const mpxkit_spacetime *r, const char *profile)
{
	char buf[1024];
	size_t defects = count_defects(r, 0);

	snprintf(
	    buf, sizeof buf,
	    "Profile %s (%s): %s. %" PRIu64 " window%s, %zu thread%s, %zu code space%s selected "
	    "of %zu. %zu defect%s (%zu of the whole program) and %zu advantage%s found; the "
	    "defects first, worst first.",
	    profile, r->source, r->command ? r->command : "command not recorded", r->windows,
	    cli_s(r->windows), r->n_threads, cli_s(r->n_threads), r->n_spaces, cli_s(r->n_spaces),
	    r->n_all_spaces, defects, cli_s(defects), count_defects(r, 1), r->n_findings - defects,
	    cli_s(r->n_findings - defects));
	cli_html_paragraph(out, buf);
}

int cli_analyze_html_write(const char *cmd, const char *path, const mpxkit_spacetime *r,
			   const char *profile, const cli_table *defects,
			   const cli_table *advantages, const char *color_by)
{
	size_t n_defects = count_defects(r, 0);
	cli_memout m;
	int rc = 0;

	if (cli_memout_open(&m) < 0)
		return cli_error(cmd, "out of memory");
	cli_html_begin(m.f, "mpxkit analyze: code spaces over time");
	summary(m.f, r, profile);
	cli_html_heading(m.f, 2, "Defects");
	if (n_defects == 0)
		cli_html_paragraph(m.f, "No defect: no code worse than its reference, and nothing "
					"past the top-down thresholds.");
	rc |= share_bars(m.f, r);
	cli_table_html(defects, m.f);
	write_sources(m.f, r, 0, "Where");
	if (n_defects < r->n_findings) {
		cli_html_heading(m.f, 2, "Advantages");
		cli_html_paragraph(m.f, "Code better than the program's own average: patterns to "
					"copy, not problems.");
		cli_table_html(advantages, m.f);
		write_sources(m.f, r, 1, "Where");
	}
	cli_html_heading(m.f, 2, "Timeline");
	rc |= timeline(m.f, r, color_by);
	cli_html_heading(m.f, 2, "Metrics of the code spaces");
	rc |= metric_map(m.f, r);
	cli_html_heading(m.f, 2, "Patterns");
	rc |= pattern_graph(m.f, r);
	cli_html_heading(m.f, 2, "Threads");
	rc |= thread_lanes(m.f, r);
	cli_html_end(m.f);
	if (cli_memout_close(&m) < 0 || rc < 0) {
		free(m.text);
		return cli_error(cmd, "out of memory");
	}
	rc = cli_write_file(cmd, path, m.text, m.len);
	free(m.text);
	return rc;
}
