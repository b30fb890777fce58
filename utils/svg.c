/* SPDX-License-Identifier: BSD-3-Clause */
/* Pictures: self-contained SVG line, scatter, bar and heat-map charts and one HTML page. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "svg.h"

#define CHAR_W	  7.0 /* a 12 px sans-serif character, on average: sizes margins to labels */
#define DEFAULT_W 960.0
#define DEFAULT_H 540.0

void cli_xml_text(FILE *out, const char *s)
{
	if (s == NULL)
		return;
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = cli_utf8_len(s);
		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c == '\'')
			fputs("&#39;", out);
		else if (c < 0x20 && c != '\t' && c != '\n')
			; /* not a character XML 1.0 allows */
		else if (n == 0)
			fputs("\xef\xbf\xbd",
			      out); /* U+FFFD: xmllint refuses bytes that are not UTF-8 */
		else
			fwrite(s, 1, n, out);
		s += n ? n : 1;
	}
}

/*
 * Okabe and Ito's colour-blind-safe set (yellow left out: too light on white), black first, then
 * Paul Tol's "muted" set; past those, hues a golden angle apart at three lightnesses and two
 * saturations, so no two series of a chart share a colour (a wrapping palette drew simt's ninth
 * part in the first's black).
 */
void cli_svg_colour(size_t i, char out[8])
{
	static const char *const palette[] = {
	    "#000000", "#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f",
	    "#332288", "#117733", "#44aa99", "#88ccee", "#ddcc77", "#cc6677", "#aa4499", "#882255"};
	const size_t n = sizeof palette / sizeof palette[0];
	static const double lightness[] = {0.42, 0.60, 0.28};
	/* HSL to RGB: the strongest and the second channel in each 60-degree sector of hue. */
	static const int first[6] = {0, 1, 1, 2, 2, 0}, second[6] = {1, 0, 2, 1, 0, 2};
	double hue, l, c, x, rgb[3] = {0, 0, 0};
	int sector;

	if (i < n) {
		memcpy(out, palette[i], 8);
		return;
	}
	hue = fmod((double)i * 137.50776405003785, 360.0) / 60.0;
	l = lightness[i % 3];
	c = (1 - fabs(2 * l - 1)) * ((i / 3) % 2 ? 0.45 : 0.70);
	sector = (int)hue % 6;
	x = c * (1 - fabs(fmod(hue, 2.0) - 1));
	rgb[second[sector]] = x;
	rgb[first[sector]] = c;
	for (int k = 0; k < 3; k++)
		rgb[k] += l - c / 2;
	snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround(255 * rgb[0]),
		 (unsigned)lround(255 * rgb[1]), (unsigned)lround(255 * rgb[2]));
}

/* Dash patterns cycle with the colours so series stay apart in grey print. */
static const char *series_dash(size_t i)
{
	static const char *const dashes[] = {NULL, "7 3", "2 2", "9 3 2 3"};
	return dashes[i % 4];
}

/* ColorBrewer's "Blues", light to dark: red outlines of flagged cells stand out on every step. */
void cli_svg_heat(double t, char out[8])
{
	static const unsigned char stops[][3] = {{0xf7, 0xfb, 0xff},
						 {0xc6, 0xdb, 0xef},
						 {0x6b, 0xae, 0xd6},
						 {0x21, 0x71, 0xb5},
						 {0x08, 0x30, 0x6b}};
	const int last = (int)(sizeof stops / sizeof stops[0]) - 1;
	unsigned char rgb[3];
	double pos, f;
	int k;

	if (isnan(t)) {
		memcpy(out, "#dddddd", 8);
		return;
	}
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	pos = t * last;
	k = pos >= last ? last - 1 : (int)pos;
	f = pos - k;
	for (int c = 0; c < 3; c++)
		rgb[c] = (unsigned char)lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c]));
	snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

void cli_svg_document(FILE *out)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
}

/* ---- shared drawing -------------------------------------------------------------------------- */

static void svg_open(FILE *out, double w, double h)
{
	fprintf(out,
		"<svg%s width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		" xmlns=\"http://www.w3.org/2000/svg\"", w, h, w, h);
	fputs("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", out);
}

static void svg_close(FILE *out)
{
	fputs("</svg>\n", out);
}

/*
 * A <text> element of class cls (NULL: none); rotate != 0 turns it about its anchor point; tip
 * (NULL: none) is its tooltip.
 */
static void text_element(FILE *out, const char *cls, double x, double y, const char *anchor,
			 double rotate, int size, const char *s, const char *tip)
{
	fputs("<text", out);
	if (cls)
		fprintf(out, " class=\"%s\"", cls);
	fprintf(out, " x=\"%.1f\" y=\"%.1f\"", x, y);
	if (anchor)
		fprintf(out, " text-anchor=\"%s\"", anchor);
	if (size)
		fprintf(out, " font-size=\"%d\"", size);
	if (rotate != 0)
		fprintf(out, " transform=\"rotate(%.0f %.1f %.1f)\"", rotate, x, y);
	fputc('>', out);
	cli_xml_text(out, s);
	if (tip) {
		fputs("<title>", out);
		cli_xml_text(out, tip);
		fputs("</title>", out);
	}
	fputs("</text>\n", out);
}

static void svg_text(FILE *out, double x, double y, const char *anchor, double rotate, int size,
		     const char *s)
{
	text_element(out, NULL, x, y, anchor, rotate, size, s, NULL);
}

/*
 * A 12 px label in at most max_px along its line: cut with an ellipsis when longer, with the
 * whole of it as the tooltip, so a chart never clips a label at its edge.
 */
static void svg_label(FILE *out, double x, double y, const char *anchor, double rotate,
		      double max_px, const char *s)
{
	size_t fits = max_px > CHAR_W ? (size_t)(max_px / CHAR_W) : 1, chars = 0, bytes = 0;
	char *cut;

	if (s == NULL || cli_text_width(s) <= fits) {
		svg_text(out, x, y, anchor, rotate, 0, s);
		return;
	}
	while (s[bytes] && chars + 1 < fits) {
		size_t n = cli_utf8_len(s + bytes);
		bytes += n ? n : 1;
		chars++;
	}
	if ((cut = malloc(bytes + 4)) == NULL) {
		svg_text(out, x, y, anchor, rotate, 0, "\xe2\x80\xa6");
		return;
	}
	memcpy(cut, s, bytes);
	memcpy(cut + bytes, "\xe2\x80\xa6", 4); /* U+2026, the ellipsis */
	text_element(out, NULL, x, y, anchor, rotate, 0, cut, s);
	free(cut);
}

static void svg_title(FILE *out, const char *s)
{
	fputs("<title>", out);
	cli_xml_text(out, s);
	fputs("</title>", out);
}

/* Axis labels: 2.5M rather than 2.5e+06, 0.25 rather than 0.250000. */
static void format_tick(char *buf, size_t size, double v)
{
	static const struct {
		double scale;
		const char *suffix;
	} si[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
	double a = fabs(v);

	if (a < 1e4 || a >= 1e15) {
		snprintf(buf, size, "%.4g", v);
		return;
	}
	for (size_t i = 0; i < sizeof si / sizeof si[0]; i++)
		if (a >= si[i].scale) {
			snprintf(buf, size, "%.4g%s", v / si[i].scale, si[i].suffix);
			return;
		}
}

/* Values in tooltips: enough digits to read a count. */
static void format_value(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.6g", v);
}

/* The widest of n labels (NULL ones skipped), in characters. */
static size_t widest(const char *const *labels, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; labels && i < n; i++)
		if (labels[i] && cli_text_width(labels[i]) > w)
			w = cli_text_width(labels[i]);
	return w;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The room a chart's title takes (15 px text) with a margin, so no chart clips its title. */
static double title_px(const char *title)
{
	return title ? CHAR_W * 15 / 12 * (double)cli_text_width(title) + 16 : 0;
}

/* ---- axes ------------------------------------------------------------------------------------ */

/* An axis on the plotted scale; log: the values are log10(1 + v), labelled with v. */
typedef struct axis {
	double lo, hi, step;
	int log;
} axis;

/* 1, 2 or 5 times a power of ten, so about `target` ticks cover range. */
static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10.0, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Fits a linear axis to [lo, hi] (lo > hi: no data) with round ends. */
static void axis_linear(axis *a, double lo, double hi)
{
	if (!(lo <= hi))
		lo = 0, hi = 1;
	if (hi - lo <= fabs(hi) * 1e-12) {
		double pad = lo == 0 ? 1 : fabs(lo) * 0.5; /* one value: put it mid-axis */
		lo -= pad, hi += pad;
	}
	a->log = 0;
	a->step = nice_step(hi - lo, 5);
	a->lo = floor(lo / a->step + 1e-9) * a->step;
	a->hi = ceil(hi / a->step - 1e-9) * a->step;
}

/* A log10(1 + v) axis from 0 up to a whole decade above hi (given on the plotted scale). */
static void axis_log(axis *a, double hi)
{
	double top = hi > 0 ? pow(10.0, hi) - 1.0 : 0.0;
	int decades = top > 1 ? (int)ceil(log10(top) - 1e-9) : 0;

	if (decades < 1)
		decades = 1;
	a->log = 1;
	a->lo = 0;
	a->step = ceil((decades + 1) / 6.0);		    /* decades between ticks */
	decades = (int)(ceil(decades / a->step) * a->step); /* so the top has its label */
	a->hi = log10(1.0 + pow(10.0, decades));
}

/* The ticks of an axis: positions on the plotted scale and the labels' values. */
static size_t axis_ticks(const axis *a, double *pos, double *label, size_t max)
{
	size_t n = 0;

	if (a->log) {
		pos[n] = 0, label[n++] = 0;
		/* 1 sits close above 0; with decades skipped it would crowd 0's label */
		for (double d = a->step > 1 ? a->step : 0; n < max; d += a->step) {
			double v = pow(10.0, d), p = log10(1.0 + v);
			if (p > a->hi + 1e-9)
				break;
			pos[n] = p, label[n++] = v;
		}
		return n;
	}
	for (size_t i = 0; n < max; i++) {
		double v = a->lo + a->step * (double)i;
		if (v > a->hi + a->step * 1e-6)
			break;
		if (fabs(v) < a->step * 1e-9)
			v = 0.0; /* no "-0" from rounding */
		pos[n] = v, label[n++] = v;
	}
	return n;
}

/* The plot area inside a chart and the map from plotted values into it. */
typedef struct frame {
	double left, top, width, height;
	axis x, y;
} frame;

static double fx(const frame *f, double x)
{
	return f->left + (x - f->x.lo) / (f->x.hi - f->x.lo) * f->width;
}

static double fy(const frame *f, double y)
{
	return f->top + f->height - (y - f->y.lo) / (f->y.hi - f->y.lo) * f->height;
}

/* Grid, ticks and their labels; the x axis only when x_ticks is set. */
static void draw_axes(FILE *out, const frame *f, int x_ticks)
{
	double pos[64], label[64];
	char buf[32];
	size_t n = axis_ticks(&f->y, pos, label, 64);

	fputs("<g stroke=\"#e0e0e0\">\n", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
			fy(f, pos[i]), f->left + f->width, fy(f, pos[i]));
	fputs("</g>\n", out);
	for (size_t i = 0; i < n; i++) {
		format_tick(buf, sizeof buf, label[i]);
		svg_text(out, f->left - 6, fy(f, pos[i]) + 4, "end", 0, 0, buf);
	}
	if (x_ticks) {
		n = axis_ticks(&f->x, pos, label, 64);
		for (size_t i = 0; i < n; i++) {
			format_tick(buf, sizeof buf, label[i]);
			svg_text(out, fx(f, pos[i]), f->top + f->height + 18, "middle", 0, 0, buf);
		}
	}
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		f->left, f->top, f->width, f->height);
}

/* Title above, x label below, y label turned along the left side. */
static void draw_labels(FILE *out, const cli_chart *c, const frame *f, double h)
{
	if (c->title)
		svg_text(out, f->left, 28, NULL, 0, 15, c->title);
	if (c->x_label)
		svg_text(out, f->left + f->width / 2, h - 14, "middle", 0, 0, c->x_label);
	if (c->y_label)
		svg_text(out, 18, f->top + f->height / 2, "middle", -90, 0, c->y_label);
}

/* ---- line and scatter charts ----------------------------------------------------------------- */

/* A point on the plotted scale: log10(1 + v) on a log axis, where v < 0 is a gap. */
static double plotted(double v, int log)
{
	if (!isfinite(v))
		return NAN;
	if (log)
		return v >= 0 ? log10(1.0 + v) : NAN;
	return v;
}

static double series_x(const cli_series *s, size_t k)
{
	return s->x ? s->x[k] : (double)k;
}

static const char *series_label(const cli_series *s, size_t i, char *buf, size_t size)
{
	if (s->label)
		return s->label;
	snprintf(buf, size, "series %zu", i + 1);
	return buf;
}

/* The range of the plotted points: [*lo, *hi] of x and y. */
static void lines_range(const cli_chart *c, const cli_series *s, size_t n_series, double xr[2],
			double yr[2])
{
	int log_x = c->log_y && c->diagonal;

	xr[0] = yr[0] = INFINITY;
	xr[1] = yr[1] = -INFINITY;
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			double x = plotted(series_x(&s[i], k), log_x),
			       y = plotted(s[i].y[k], c->log_y);
			if (isnan(x) || isnan(y))
				continue;
			xr[0] = fmin(xr[0], x), xr[1] = fmax(xr[1], x);
			yr[0] = fmin(yr[0], y), yr[1] = fmax(yr[1], y);
		}
}

static void lines_axes(const cli_chart *c, const cli_series *s, size_t n_series, frame *f)
{
	double xr[2], yr[2];

	lines_range(c, s, n_series, xr, yr);
	if (c->diagonal) { /* one scale on both axes, so y = x runs corner to corner */
		xr[0] = yr[0] = fmin(xr[0], yr[0]);
		xr[1] = yr[1] = fmax(xr[1], yr[1]);
	}
	if (yr[0] <= yr[1] && yr[0] > 0)
		yr[0] = 0; /* counts, times and energies: bars of the eye start at zero */
	if (c->diagonal)
		xr[0] = yr[0];
	if (c->log_y) {
		axis_log(&f->y, yr[1]);
		if (c->diagonal)
			f->x = f->y;
		else
			axis_linear(&f->x, xr[0], xr[1]);
	} else {
		axis_linear(&f->y, yr[0], yr[1]);
		if (c->diagonal)
			f->x = f->y;
		else
			axis_linear(&f->x, xr[0], xr[1]);
	}
}

static void point_tooltip(FILE *out, const char *label, double x, double y)
{
	char bx[32], by[32];

	format_value(bx, sizeof bx, x);
	format_value(by, sizeof by, y);
	fputs("<title>", out);
	cli_xml_text(out, label);
	fprintf(out, ": x = %s, y = %s</title>", bx, by);
}

/* The line of one series, one polyline per run of points between gaps. */
static void draw_line(FILE *out, const cli_chart *c, const frame *f, const cli_series *s, size_t i,
		      const char *label)
{
	int log_x = c->log_y && c->diagonal;
	const char *dash = series_dash(i);
	char colour[8];
	size_t k = 0;

	cli_svg_colour(i, colour);

	while (k < s->n) {
		size_t start, end;
		while (k < s->n &&
		       (isnan(plotted(series_x(s, k), log_x)) || isnan(plotted(s->y[k], c->log_y))))
			k++;
		start = k;
		while (k < s->n && !isnan(plotted(series_x(s, k), log_x)) &&
		       !isnan(plotted(s->y[k], c->log_y)))
			k++;
		end = k;
		if (end == start)
			break;
		if (end - start == 1) { /* a lone point draws no line: a dot keeps it visible */
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\">",
				fx(f, plotted(series_x(s, start), log_x)),
				fy(f, plotted(s->y[start], c->log_y)), colour);
			point_tooltip(out, label, series_x(s, start), s->y[start]);
			fputs("</circle>\n", out);
			continue;
		}
		fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"", colour);
		if (dash)
			fprintf(out, " stroke-dasharray=\"%s\"", dash);
		fputs(" points=\"", out);
		for (size_t p = start; p < end; p++)
			fprintf(out, "%s%.1f,%.1f", p > start ? " " : "",
				fx(f, plotted(series_x(s, p), log_x)),
				fy(f, plotted(s->y[p], c->log_y)));
		fputs("\">", out);
		svg_title(out, label);
		fputs("</polyline>\n", out);
	}
}

/* Dots of a scatter series, and rings around the points its `mark` flags. */
static void draw_markers(FILE *out, const cli_chart *c, const frame *f, const cli_series *s,
			 size_t i, const char *label)
{
	int log_x = c->log_y && c->diagonal;
	char colour[8];

	cli_svg_colour(i, colour);
	for (size_t k = 0; k < s->n; k++) {
		double x = plotted(series_x(s, k), log_x), y = plotted(s->y[k], c->log_y);
		int dot = s->markers != 0, ring = s->mark && s->mark[k];
		if (isnan(x) || isnan(y) || !(dot || ring))
			continue;
		if (ring) {
			fprintf(out,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6.5\" fill=\"none\" "
				"stroke=\"%s\" stroke-width=\"1.8\">",
				fx(f, x), fy(f, y), colour);
			point_tooltip(out, label, series_x(s, k), s->y[k]);
			fputs("</circle>\n", out);
		}
		if (dot) {
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">",
				fx(f, x), fy(f, y), colour);
			point_tooltip(out, label, series_x(s, k), s->y[k]);
			fputs("</circle>\n", out);
		}
	}
}

static void draw_legend_entry(FILE *out, double x, double y, double max_px, size_t i, int line,
			      int dot, const char *label)
{
	const char *dash = series_dash(i);
	char colour[8];

	cli_svg_colour(i, colour);
	if (line) {
		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2.5\"",
			x, y, x + 26, y, colour);
		if (dash)
			fprintf(out, " stroke-dasharray=\"%s\"", dash);
		fputs("/>\n", out);
	}
	if (dot)
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x + 13, y,
			colour);
	svg_label(out, x + 32, y + 4, NULL, 0, max_px - 36, label);
}

void cli_svg_lines(FILE *out, const cli_chart *c, const cli_series *s, size_t n_series)
{
	double w = c->width > 0 ? c->width : DEFAULT_W, h = c->height > 0 ? c->height : DEFAULT_H;
	size_t longest = 0;
	char buf[32];
	frame f;

	for (size_t i = 0; i < n_series; i++) {
		size_t chars = cli_text_width(series_label(&s[i], i, buf, sizeof buf));
		longest = chars > longest ? chars : longest;
	}
	f.left = 80;
	f.top = 50;
	w = fmax(w, f.left + title_px(c->title));
	f.width = w - f.left - clamp(50 + CHAR_W * (double)longest, 100, w * 0.35);
	f.height = h - f.top - 60;
	lines_axes(c, s, n_series, &f);
	svg_open(out, w, h);
	draw_axes(out, &f, 1);
	draw_labels(out, c, &f, h);
	if (c->diagonal)
		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
			"stroke-dasharray=\"5 4\"><title>y = x</title></line>\n",
			fx(&f, f.x.lo), fy(&f, f.x.lo), fx(&f, f.x.hi), fy(&f, f.x.hi));
	for (size_t i = 0; i < n_series; i++) {
		const char *label = series_label(&s[i], i, buf, sizeof buf);
		if (s[i].markers != 1)
			draw_line(out, c, &f, &s[i], i, label);
		draw_markers(out, c, &f, &s[i], i, label);
		draw_legend_entry(out, f.left + f.width + 15, f.top + 10 + 20.0 * (double)i,
				  w - (f.left + f.width + 15), i, s[i].markers != 1,
				  s[i].markers != 0, label);
	}
	svg_close(out);
}

/* ---- bars ------------------------------------------------------------------------------------ */

static double bar_value(const double *values, size_t k)
{
	return isfinite(values[k]) && values[k] > 0 ? values[k] : 0; /* all >= 0 by contract */
}

static void bar_tooltip(FILE *out, const char *category, const char *part, double v, double total)
{
	char bv[32], bt[32];

	format_value(bv, sizeof bv, v);
	format_value(bt, sizeof bt, total);
	fputs("<title>", out);
	cli_xml_text(out, category);
	fputs(": ", out);
	cli_xml_text(out, part);
	fprintf(out, " = %s (%.1f %% of %s)</title>", bv, total > 0 ? 100 * v / total : 0.0, bt);
}

void cli_svg_bars(FILE *out, const cli_chart *c, const char *const *categories, size_t n_categories,
		  const char *const *parts, size_t n_parts, const double *values, int normalise)
{
	const double row = 24, bar = 16;
	double w = c->width > 0 ? c->width : DEFAULT_W, h, max = 0, legend;
	frame f;

	for (size_t k = 0; k < n_categories; k++) {
		double total = 0;
		for (size_t p = 0; p < n_parts; p++)
			total += bar_value(values, k * n_parts + p);
		max = fmax(max, total);
	}
	f.left = clamp(16 + CHAR_W * (double)widest(categories, n_categories), 60, w * 0.4) +
		 (c->y_label ? 24 : 0);
	w = fmax(w, f.left + title_px(c->title));
	legend = clamp(50 + CHAR_W * (double)widest(parts, n_parts), 100, w * 0.35);
	f.top = 50;
	f.width = w - f.left - legend;
	f.height = fmax(row * (double)n_categories, 20.0 * (double)n_parts);
	h = c->height > 0 ? c->height : f.top + f.height + 60;
	f.height = h - f.top - 60;
	f.y = (axis){0, 1, 1, 0};
	if (normalise)
		f.x = (axis){0, 100, 20, 0};
	else
		axis_linear(&f.x, 0, max);
	svg_open(out, w, h);
	{
		/* vertical grid lines and x labels; the categories label the y side */
		double pos[64], label[64];
		char buf[40];
		size_t n = axis_ticks(&f.x, pos, label, 64);
		fputs("<g stroke=\"#e0e0e0\">\n", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
				fx(&f, pos[i]), f.top, fx(&f, pos[i]), f.top + f.height);
		fputs("</g>\n", out);
		for (size_t i = 0; i < n; i++) {
			format_tick(buf, sizeof buf, label[i]);
			if (normalise)
				strcat(buf, " %");
			svg_text(out, fx(&f, pos[i]), f.top + f.height + 18, "middle", 0, 0, buf);
		}
	}
	draw_labels(out, c, &f, h);
	for (size_t k = 0; k < n_categories; k++) {
		double total = 0, x = 0,
		       step = f.height / (double)(n_categories ? n_categories : 1);
		double y = f.top + step * (double)k + (step - fmin(bar, step * 0.8)) / 2;
		for (size_t p = 0; p < n_parts; p++)
			total += bar_value(values, k * n_parts + p);
		svg_label(out, f.left - 6, f.top + step * ((double)k + 0.5) + 4, "end", 0,
			  f.left - 10 - (c->y_label ? 24 : 0), categories[k] ? categories[k] : "");
		for (size_t p = 0; p < n_parts; p++) {
			double v = bar_value(values, k * n_parts + p);
			double len = normalise ? (total > 0 ? 100 * v / total : 0) : v;
			char colour[8];
			if (len <= 0)
				continue;
			cli_svg_colour(p, colour);
			fprintf(out,
				"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"%s\">",
				fx(&f, x), y, fx(&f, x + len) - fx(&f, x), fmin(bar, step * 0.8),
				colour);
			bar_tooltip(out, categories[k] ? categories[k] : "",
				    parts[p] ? parts[p] : "", v, total);
			fputs("</rect>\n", out);
			x += len;
		}
	}
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		f.left, f.top, f.width, f.height);
	/* The legend names the parts that were drawn, in their colours. */
	for (size_t p = 0, drawn = 0; p < n_parts; p++) {
		double x = f.left + f.width + 15, y = f.top + 10 + 20.0 * (double)drawn, any = 0;
		char colour[8];
		for (size_t k = 0; k < n_categories; k++)
			any += bar_value(values, k * n_parts + p);
		if (!(any > 0))
			continue;
		drawn++;
		cli_svg_colour(p, colour);
		fprintf(out,
			"<rect class=\"swatch\" x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" "
			"fill=\"%s\"/>\n",
			x, y - 7, colour);
		svg_label(out, x + 20, y + 4, NULL, 0, w - x - 24, parts[p] ? parts[p] : "");
	}
	svg_close(out);
}

/* ---- heat maps ------------------------------------------------------------------------------- */

typedef struct heat_scale {
	double lo, hi; /* on the coloured scale: v, or log10(1 + v) */
	int log;
} heat_scale;

static double heat_plotted(const heat_scale *s, double v)
{
	return s->log ? log10(1.0 + fmax(v, 0.0)) : v;
}

static double heat_t(const heat_scale *s, double v)
{
	double p = heat_plotted(s, v);

	return s->hi > s->lo ? (p - s->lo) / (s->hi - s->lo) : 0.5;
}

static heat_scale heat_scale_of(const cli_heatmap *h)
{
	heat_scale s = {0, 0, h->log_scale};
	double lo = h->lo, hi = h->hi;

	if (lo == hi) {
		lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < h->n_rows * h->n_cols; i++)
			if (isfinite(h->values[i]))
				lo = fmin(lo, h->values[i]), hi = fmax(hi, h->values[i]);
		if (lo > hi)
			lo = hi = 0;
		/* Counts, shares and rates: the lightest step is 0, not the smallest value seen. */
		if (lo > 0)
			lo = 0;
	}
	s.lo = heat_plotted(&s, lo);
	s.hi = heat_plotted(&s, hi);
	return s;
}

/* Every k-th label, so labels stay `room` pixels apart on cells `cell` pixels wide. */
static size_t label_every(double cell, double room)
{
	return cell >= room ? 1 : (size_t)ceil(room / cell);
}

static void heat_tooltip(FILE *out, const cli_heatmap *h, size_t r, size_t c, double v, int flag)
{
	char bv[32];

	format_value(bv, sizeof bv, v);
	fputs("<title>", out);
	cli_xml_text(out, h->row_labels && h->row_labels[r] ? h->row_labels[r] : "");
	fputs(" / ", out);
	cli_xml_text(out, h->col_labels && h->col_labels[c] ? h->col_labels[c] : "");
	fprintf(out, ": %s%s</title>", bv, flag ? " (flagged)" : "");
}

/* The colour bar: 32 steps from lo (bottom) to hi (top), labelled with values, and the caption. */
static void heat_legend(FILE *out, const cli_heatmap *h, const heat_scale *s, double x, double y,
			double height)
{
	const int steps = 32;
	char colour[8], labels[3][32];
	double widest_label = 0;

	fputs("<g class=\"colour-scale\">\n", out);
	for (int i = 0; i < steps; i++) {
		cli_svg_heat((i + 0.5) / steps, colour);
		fprintf(out,
			"<rect x=\"%.1f\" y=\"%.2f\" width=\"16\" height=\"%.2f\" fill=\"%s\"/>\n",
			x, y + height - height * (i + 1) / steps, height / steps + 0.3, colour);
	}
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		x, y, height);
	for (int i = 0; i <= 2; i++) {
		double p = s->lo + (s->hi - s->lo) * i / 2.0;
		format_tick(labels[i], sizeof labels[i], s->log ? pow(10.0, p) - 1.0 : p);
		widest_label = fmax(widest_label, (double)cli_text_width(labels[i]));
		/* the lowest label is marked for tests: the scale must start at 0 */
		text_element(out, i == 0 ? "scale-lo" : NULL, x + 22,
			     y + height - height * i / 2.0 + 4, NULL, 0, 0, labels[i], NULL);
	}
	/* the caption, upright, clear of the widest label */
	if (h->value_label)
		svg_text(out, x + 36 + CHAR_W * widest_label, y + height / 2, "middle", -90, 0,
			 h->value_label);
	fputs("</g>\n", out);
}

void cli_svg_heatmap(FILE *out, const cli_heatmap *h)
{
	const heat_scale s = heat_scale_of(h);
	size_t rows = h->n_rows, cols = h->n_cols, row_step, col_step;
	size_t caption = h->value_label ? cli_text_width(h->value_label) : 0;
	double left, top, cell_w, cell_h, w, ht, legend_h;
	char colour[8];

	left = clamp(16 + CHAR_W * (double)widest(h->row_labels, rows), 40, 320);
	top = 50 + clamp(CHAR_W * 0.87 * (double)widest(h->col_labels, cols), 10, 150);
	cell_w = clamp((DEFAULT_W - left - 130) / (double)(cols ? cols : 1), 0.05, 40);
	cell_h = clamp(480.0 / (double)(rows ? rows : 1), 0.05, 22);
	w = fmax(left + cell_w * (double)cols + 130, left + title_px(h->title));
	legend_h = clamp(cell_h * (double)rows, 100, 300);
	/* room below for the caption, turned upright and centred on the colour bar */
	ht = top +
	     fmax(cell_h * (double)rows,
		  fmax(legend_h, legend_h / 2 + CHAR_W * (double)caption / 2 + 10)) +
	     30;
	row_step = label_every(cell_h, 12);
	col_step = label_every(cell_w, 13);
	svg_open(out, w, ht);
	if (h->title)
		svg_text(out, left, 28, NULL, 0, 15, h->title);
	for (size_t r = 0; h->row_labels && r < rows; r += row_step)
		svg_label(out, left - 6, top + cell_h * ((double)r + 0.5) + 4, "end", 0, left - 10,
			  h->row_labels[r] ? h->row_labels[r] : "");
	for (size_t c = 0; h->col_labels && c < cols; c += col_step)
		svg_label(out, left + cell_w * ((double)c + 0.5) + 4, top - 6, NULL, -60,
			  (top - 10) / 0.87, h->col_labels[c] ? h->col_labels[c] : "");
	fputs("<g shape-rendering=\"crispEdges\">\n", out);
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++) {
			double v = h->values[r * cols + c];
			if (isnan(v))
				continue; /* a blank cell */
			cli_svg_heat(heat_t(&s, v), colour);
			fprintf(out,
				"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"%s\">",
				left + cell_w * (double)c, top + cell_h * (double)r, cell_w, cell_h,
				colour);
			heat_tooltip(out, h, r, c, v, h->flags && h->flags[r * cols + c]);
			fputs("</rect>\n", out);
		}
	fputs("</g>\n", out);
	/* flagged cells last, so no neighbour paints over their outline */
	for (size_t i = 0; h->flags && i < rows * cols; i++)
		if (h->flags[i]) {
			fprintf(out,
				"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"none\" stroke=\"#d00000\" stroke-width=\"2\">",
				left + cell_w * (double)(i % cols),
				top + cell_h * (double)(i / cols), cell_w, cell_h);
			heat_tooltip(out, h, i / cols, i % cols, h->values[i], 1);
			fputs("</rect>\n", out);
		}
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		left, top, cell_w * (double)cols, cell_h * (double)rows);
	heat_legend(out, h, &s, left + cell_w * (double)cols + 24, top, legend_h);
	svg_close(out);
}

/* ---- HTML ------------------------------------------------------------------------------------ */

/* One look for every page; no url(), @import or font fetch, so nothing leaves the disk. */
static const char page_css[] =
    "body{font-family:sans-serif;color:#222;line-height:1.45;max-width:1100px;margin:1.5em auto;"
    "padding:0 1em}\n"
    "h1{font-size:1.6em;margin-bottom:0.4em}\n"
    "h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ccc}\n"
    "h3{font-size:1.1em;margin-top:1.5em}\n"
    "svg{display:block;max-width:100%;height:auto;margin:1em 0}\n"
    "table.data{border-collapse:collapse;margin:1em 0;font-size:0.92em}\n"
    "table.data caption{caption-side:top;text-align:left;color:#555;padding-bottom:0.3em}\n"
    "table.data th,table.data td{padding:0.2em 0.7em;border-bottom:1px solid #e4e4e4;"
    "text-align:left;vertical-align:top}\n"
    "table.data th{border-bottom:2px solid #999}\n"
    "table.data .num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.data td.missing{color:#888}\n";

void cli_html_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>",
	      out);
	cli_xml_text(out, title);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
	if (title)
		cli_html_heading(out, 1, title);
}

void cli_html_end(FILE *out)
{
	fputs("</body>\n</html>\n", out);
}

void cli_html_heading(FILE *out, int level, const char *text)
{
	level = level < 1 ? 1 : level > 6 ? 6 : level;
	fprintf(out, "<h%d>", level);
	cli_xml_text(out, text);
	fprintf(out, "</h%d>\n", level);
}

void cli_html_paragraph(FILE *out, const char *text)
{
	fputs("<p>", out);
	cli_xml_text(out, text);
	fputs("</p>\n", out);
}
