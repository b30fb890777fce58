/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit list: every event that exists here, by kind (doc/events.md), or a trace's columns. */
#define _GNU_SOURCE /* strcasestr */
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mpxkit/event.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

#include "cli.h"
#include "commands.h"
#include "output.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit list [OPTIONS] [PATTERN]\n"
		"\n"
		"List the events 'mpxkit stat -e' and the PAPI component (as mpxkit:::EVENT)\n"
		"take, as doc/events.md names them, grouped by kind: software, hardware and\n"
		"cache (where the kernel has a core PMU), tracepoint, sysfs PMU, libpfm4 PMU\n"
		"(umasks indented), raw.  One line each: name, unit ('-' for plain counts),\n"
		"description (with the scale where sysfs gives one).  Nothing is opened: an\n"
		"event listed may still be refused when counted.  Lines starting with '#'\n"
		"head each kind.\n"
		"\n"
		"PATTERN: a kind (software, hardware, cache, tracepoint, sysfs, libpfm4, raw;\n"
		"also sw, hw, pmu, pfm), a glob ('sched:*'), or else a substring, matched\n"
		"without regard to case.\n"
		"\n"
		"Options:\n"
		"  -f, --format FORMAT  table (default) or json: an array of objects with\n"
		"                       name, kind, pmu, unit, scale, description, umask,\n"
		"                       counts (false: libpfm4 knows it, the kernel has no\n"
		"                       PMU to count it)\n"
		"      --replay TRACE   list the events of a recorded trace instead\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 success, 1 usage error, 2 failure.\n");
}

/* ---- which entries ------------------------------------------------------------------------ */

typedef struct filter {
	int kind; /* a kind asked for by name, or -1 */
	const char *pattern;
	int glob;
} filter;

static int kind_of_word(const char *w)
{
	static const struct {
		const char *word;
		mpxkit_event_class kind;
	} words[] = {
	    {"sw", MPXKIT_EVENT_SOFTWARE},   {"hw", MPXKIT_EVENT_HARDWARE},
	    {"pmu", MPXKIT_EVENT_SYSFS},     {"pfm", MPXKIT_EVENT_LIBPFM},
	    {"native", MPXKIT_EVENT_LIBPFM},
	};

	for (int k = 0; k < MPXKIT_EVENT_N_KINDS; k++)
		if (strcasecmp(w, mpxkit_event_kind_name((mpxkit_event_class)k)) == 0)
			return k;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasecmp(w, words[i].word) == 0)
			return (int)words[i].kind;
	return -1;
}

static void filter_init(filter *f, const char *pattern)
{
	f->pattern = pattern;
	f->kind = pattern ? kind_of_word(pattern) : -1;
	f->glob = pattern && strpbrk(pattern, "*?[") != NULL;
}

static int wanted(const filter *f, const mpxkit_event_info *e)
{
	if (f->pattern == NULL)
		return 1;
	if (f->kind >= 0)
		return (int)e->kind == f->kind;
	if (f->glob)
		return fnmatch(f->pattern, e->name, FNM_CASEFOLD) == 0;
	return strcasestr(e->name, f->pattern) != NULL;
}

/* ---- output ------------------------------------------------------------------------------- */

static void print_heading(mpxkit_event_catalog *c, mpxkit_event_class kind)
{
	const char *origin = mpxkit_event_catalog_origin(c, kind);

	printf("# %s%s%s\n", mpxkit_event_kind_name(kind), origin[0] ? ": " : "", origin);
}

static void print_line(const mpxkit_event_info *e)
{
	int width = e->umask ? 38 : 40;
	const char *indent = e->umask ? "  " : "";

	if (e->unit[0] == '\0' && e->description[0] == '\0' && e->scale == 1) {
		printf("%s%s\n", indent, e->name);
		return;
	}
	printf("%s%-*s %-7s", indent, width, e->name, e->unit[0] ? e->unit : "-");
	if (e->scale != 1)
		printf(" scale %.17g;", e->scale);
	printf("%s%s\n", e->description[0] ? " " : "", e->description);
}

static int list_table(mpxkit_event_catalog *c, const filter *f)
{
	mpxkit_event_info e;
	int last = -1, n = 0;

	for (size_t i = 0; mpxkit_event_catalog_get(c, i, &e) == 0; i++) {
		if (!wanted(f, &e))
			continue;
		if ((int)e.kind != last)
			print_heading(c, e.kind);
		last = (int)e.kind;
		print_line(&e);
		n++;
	}
	return n;
}

static int list_json(mpxkit_event_catalog *c, const filter *f, int *n)
{
	cli_json *j = cli_json_new(stdout);
	mpxkit_event_info e;

	if (j == NULL)
		return -1;
	*n = 0;
	cli_json_array(j);
	for (size_t i = 0; mpxkit_event_catalog_get(c, i, &e) == 0; i++) {
		if (!wanted(f, &e))
			continue;
		cli_json_object(j);
		cli_json_key(j, "name");
		cli_json_str(j, e.name);
		cli_json_key(j, "kind");
		cli_json_str(j, mpxkit_event_kind_name(e.kind));
		cli_json_key(j, "pmu");
		cli_json_str(j, e.pmu);
		cli_json_key(j, "unit");
		cli_json_str(j, e.unit);
		cli_json_key(j, "scale");
		cli_json_num(j, e.scale);
		cli_json_key(j, "description");
		cli_json_str(j, e.description);
		cli_json_key(j, "umask");
		cli_json_bool(j, e.umask);
		cli_json_key(j, "counts");
		cli_json_bool(j, e.counts);
		cli_json_close(j);
		(*n)++;
	}
	cli_json_close(j);
	return cli_json_end(j);
}

/* --replay: the trace's columns, as the replay source serves them. */
static int list_replay(const char *cmd, const char *path, cli_format format)
{
	mpxkit_trace *trace = NULL;
	mpxkit_source *s = NULL;
	mpxkit_source_event ev;
	mpxkit_diag diag = {0};
	cli_json *j = NULL;
	int rc = mpxkit_trace_read(path, &trace, &diag);

	if (rc == 0)
		rc = mpxkit_source_open_replay(&s, trace, 1, &diag);
	if (rc < 0) {
		mpxkit_trace_free(trace);
		return cli_lib_error(cmd, rc, &diag);
	}
	if (format == CLI_FORMAT_JSON && (j = cli_json_new(stdout)) != NULL)
		cli_json_array(j);
	for (size_t i = 0; mpxkit_source_list(s, i, &ev) == 0; i++) {
		if (j == NULL) {
			printf("%-28s %-3s %s\n", ev.name, ev.unit[0] ? ev.unit : "-",
			       ev.description);
			continue;
		}
		cli_json_object(j);
		cli_json_key(j, "name");
		cli_json_str(j, ev.name);
		cli_json_key(j, "kind");
		cli_json_str(j, "replay");
		cli_json_key(j, "description");
		cli_json_str(j, ev.description);
		cli_json_close(j);
	}
	if (j) {
		cli_json_close(j);
		rc = cli_json_end(j);
	}
	mpxkit_source_free(s);
	mpxkit_trace_free(trace);
	return rc < 0 ? cli_error(cmd, "out of memory") : cli_close_stdout(cmd);
}

int cmd_list(int argc, char **argv)
{
	static const struct option options[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"replay", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "list", *replay = NULL;
	cli_format format = CLI_FORMAT_TABLE;
	mpxkit_event_catalog *c = NULL;
	mpxkit_diag diag = {0};
	filter f;
	int opt, rc, n = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:f:h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (cli_parse_format(optarg, &format) != 0 || format == CLI_FORMAT_CSV)
				return cli_usage_error(
				    cmd, "--format takes table or json, not '%s'", optarg);
			break;
		case 'R':
			replay = optarg;
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, opt, argv);
		}
	}
	if (optind + 1 < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if (replay && optind < argc)
		return cli_usage_error(cmd, "--replay lists a trace's columns: no PATTERN with it");
	if (replay)
		return list_replay(cmd, replay, format);
	filter_init(&f, optind < argc ? argv[optind] : NULL);
	if ((rc = mpxkit_event_catalog_open(&c, 0, &diag)) < 0)
		return cli_lib_error(cmd, rc, &diag);
	if (format == CLI_FORMAT_JSON)
		rc = list_json(c, &f, &n);
	else
		n = list_table(c, &f);
	mpxkit_event_catalog_free(c);
	if (rc < 0)
		return cli_error(cmd, "out of memory");
	if (n == 0 && f.pattern)
		cli_note(cmd, "no event matches '%s'", f.pattern);
	return cli_close_stdout(cmd);
}
