/* SPDX-License-Identifier: BSD-3-Clause */
/* Pictures: self-contained SVG charts and one HTML page that holds them, no network, no script. */
#ifndef MPXKIT_CLI_SVG_H
#define MPXKIT_CLI_SVG_H

#include <stddef.h>
#include <stdio.h>

/*
 * Every picture mpxkit draws goes through here (eval --plot, simt, predict
 * --plot, analyze --html, report): one look, one escaping rule, and output
 * that xmllint accepts.  Each chart writes one complete <svg> element to a
 * FILE (usually a cli_memout), so the same chart can stand alone in a .svg
 * file (cli_svg_document) or sit inline in an HTML page.  Every text is
 * escaped here; callers pass plain strings.  Charts carry <title> tooltips
 * on their marks, so a browser shows each value under the pointer.
 */

/* &, <, >, " and ' escaped for XML text and attributes; control bytes other than TAB/LF dropped. */
void cli_xml_text(FILE *out, const char *s);

/*
 * The colour of series i in every chart, "#rrggbb": sixteen fixed colours, then generated ones;
 * no two of the first thousand series share a colour.
 */
void cli_svg_colour(size_t i, char out[8]);

/* A sequential colour for t in [0, 1] (clamped; NaN is light grey), light to dark: heat maps. */
void cli_svg_heat(double t, char out[8]);

/* <?xml ...?> prolog before a standalone chart. */
void cli_svg_document(FILE *out);

/* ---- line and scatter charts ----------------------------------------------------------------- */

typedef struct cli_series {
	const char *label;
	const double *x; /* NULL: 0, 1, 2, ... */
	const double *y; /* NaN is a gap */
	size_t n;
	int markers;		   /* 0: a line; 1: markers only (scatter); 2: line with markers */
	const unsigned char *mark; /* optional, n flags: draw a marker at the points with flag 1 */
} cli_series;

typedef struct cli_chart {
	const char *title;
	const char *x_label;
	const char *y_label;
	double width, height; /* 0: 960 x 540 */
	int log_y;	      /* plot log10(1 + y) and label the axis with y; y < 0 is a gap */
	int diagonal;	      /* draw y = x (predicted against measured): both axes share one
				 scale, log10(1 + x) too under log_y */
} cli_chart;

void cli_svg_lines(FILE *out, const cli_chart *c, const cli_series *s, size_t n_series);

/* ---- bars ------------------------------------------------------------------------------------ */

/*
 * Horizontal stacked bars: one bar per category, one segment per part
 * (values[category * n_parts + part], all >= 0; others are drawn as 0), a
 * legend of parts.  With normalise set every bar is scaled to 100 % (shares).
 * The chart's x_label names the values (along the bars), y_label the
 * categories; height 0 sizes the chart to the categories.
 */
void cli_svg_bars(FILE *out, const cli_chart *c, const char *const *categories, size_t n_categories,
		  const char *const *parts, size_t n_parts, const double *values, int normalise);

/* ---- heat maps ------------------------------------------------------------------------------- */

/*
 * A rows x columns grid coloured by value (values[row * n_cols + col]; NaN
 * is a blank cell).  Colour runs over [lo, hi]; lo == hi picks the data's
 * range.  With log_scale the colour follows log10(1 + v).  Each cell's
 * tooltip shows row, column and the value; `flags` (optional, same shape)
 * outlines flagged cells in red (imbalance, defects).
 */
typedef struct cli_heatmap {
	const char *title;
	const char *const *row_labels;
	size_t n_rows;
	const char *const *col_labels;
	size_t n_cols;
	const double *values;
	const unsigned char *flags;
	double lo, hi;
	int log_scale;
	const char *value_label; /* legend caption, e.g. "misses per 1000 instructions" */
} cli_heatmap;

void cli_svg_heatmap(FILE *out, const cli_heatmap *h);

/* ---- HTML ------------------------------------------------------------------------------------ */

/*
 * One self-contained page: inline CSS, no script, no external resource, so
 * it opens from disk in any browser and passes a strict no-network check
 * (no URL but the SVG namespace's name, which is never fetched).  Charts are
 * the same bytes inline or standalone.  Tests check a page with
 * ctests/html_renders.sh PAGE [MIN_COLOURED_PIXELS].
 * begin writes the title as <title> and <h1> (NULL: neither heading nor
 * text).  Between begin and end the caller writes body HTML; text goes through
 * cli_xml_text, charts are written inline.
 */
void cli_html_begin(FILE *out, const char *title);
void cli_html_end(FILE *out);

/*
 * A heading (<h1> to <h6>) and a paragraph of plain text; tables come from
 * cli_table_html (output.h).  The page is also well-formed XML (void
 * elements closed, "<br/>"), so xmllint can check it.
 */
void cli_html_heading(FILE *out, int level, const char *text);
void cli_html_paragraph(FILE *out, const char *text);

#endif
