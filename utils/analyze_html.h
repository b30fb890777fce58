/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit analyze --html: the report page, apart from the command's options and text output. */
#ifndef MPXKIT_ANALYZE_HTML_H
#define MPXKIT_ANALYZE_HTML_H

#include "mpxkit/spacetime.h"
#include "output.h"

/* Nonzero when key can colour the timeline: a metric key or "cost". */
int cli_analyze_color_ok(const char *key);

/*
 * Writes the page (doc/spacetime.md, "HTML") to path whole: the defects (the
 * table given, and their source lines), the advantages in a section of their
 * own (their table), the timeline coloured by color_by (NULL: the top
 * finding's metric), the heat map of spaces against metrics, the pattern
 * graph and the threads' lanes.  CLI_OK or CLI_FAIL after one line.
 */
int cli_analyze_html_write(const char *cmd, const char *path, const mpxkit_spacetime *r,
			   const char *profile, const cli_table *defects,
			   const cli_table *advantages, const char *color_by);

#endif
