/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit pack, unpack, info and verify: the command-line side of .pcz dumps. */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mpxkit/reader.h"
#include "commands.h"
#include "mpxkit/outfile.h"
#include "mpxkit/pcz.h"

static void pack_usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit pack [OPTIONS] IN.csv[.gz] [-o OUT.pcz]\n\n"
		"Compress per-unit counter CSV into a .pcz dump (doc/pcz-format.md).\n"
		"IN.csv: '# key=value' lines, the header region,unit,start_ns,end_ns[,cpu,numa],"
		"EV1,...\nand one row per unit per region ('-' reads standard input).\n\n"
		"Options:\n"
		"  -o, --output=FILE      output file (default: IN with .pcz for .csv or .csv.gz)\n"
		"  -c, --codec=NAME       model (default: format version 2, a model of the\n"
		"                         counters), or a byte-stream stage for format\n"
		"                         version 1: zstd, zlib, stored\n"
		"  -l, --level=N          version 1 codec level (zstd -7..22, default 1; zlib 1..9,\n"
		"                         default 6); without -c it selects zstd\n"
		"  -t, --threshold=X      balance-degree threshold in [0, 1] (default 0.9)\n"
		"  -g, --grouping=MODE    none (default), or for version 1: auto, balance, cluster\n"
		"                         (without -c, these select zstd)\n"
		"      --chunk-size=BYTES input per REGIONS section, 8 bytes a value and timestamp\n"
		"                         (default 1048576)\n"
		"      --topology[=XML]   store this machine's hwloc topology, or that XML file\n"
		"  -h, --help             show this help\n");
}

static int parse_codec(const char *t, mpxkit_pcz_codec *c)
{
	if (strcmp(t, "model") == 0)
		*c = MPXKIT_PCZ_MODEL;
	else if (strcmp(t, "zstd") == 0)
		*c = MPXKIT_PCZ_ZSTD;
	else if (strcmp(t, "zlib") == 0)
		*c = MPXKIT_PCZ_ZLIB;
	else if (strcmp(t, "stored") == 0)
		*c = MPXKIT_PCZ_STORED;
	else
		return -1;
	return 0;
}

static int parse_grouping(const char *t, mpxkit_pcz_grouping *g)
{
	static const char *const names[] = { "auto", "balance", "cluster", "none" };
	for (int i = 0; i < 4; i++)
		if (strcmp(t, names[i]) == 0) {
			*g = (mpxkit_pcz_grouping)i;
			return 0;
		}
	return -1;
}

/* A threshold "0.9" into parts per million, without the locale's decimal point. */
static int parse_threshold(const char *t, uint32_t *ppm)
{
	char *end;
	double x = strtod(t, &end);

	if (*t == '\0' || *end != '\0' || !(x >= 0.0 && x <= 1.0))
		return -1;
	*ppm = (uint32_t)(x * 1e6 + 0.5);
	return 0;
}

/* hwloc's XML export of one machine is tens of kilobytes; 64 MiB stops a wrong file early. */
#define TOPOLOGY_MAX_BYTES ((uint64_t)64 << 20)

static char *read_text_file(const char *path, const char *cmd)
{
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_TEXT,
				      .max_bytes = TOPOLOGY_MAX_BYTES,
				      .what = "topology XML file" };
	mpxkit_diag diag = { 0 };
	char *buf = NULL;
	size_t n;
	int rc = mpxkit_read_file(path, &opt, &buf, &n, &diag);

	if (rc < 0) {
		cli_lib_error(cmd, rc, &diag);
		return NULL;
	}
	if (n == 0) {
		cli_error(cmd, "%s: empty, not an XML topology", path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* IN.csv and IN.csv.gz -> IN.pcz, other names get .pcz appended. */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n + 5);

	if (out == NULL)
		return NULL;
	memcpy(out, in, n + 1);
	if (n > 7 && strcmp(in + n - 7, ".csv.gz") == 0)
		out[n - 7] = '\0';
	else if (n > 4 && strcmp(in + n - 4, ".csv") == 0)
		out[n - 4] = '\0';
	strcat(out, ".pcz");
	return out;
}

int cmd_pack(int argc, char **argv)
{
	enum { OPT_CHUNK = 256, OPT_TOPOLOGY };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "codec", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'l' },
		{ "threshold", required_argument, NULL, 't' },
		{ "grouping", required_argument, NULL, 'g' },
		{ "chunk-size", required_argument, NULL, OPT_CHUNK },
		{ "topology", optional_argument, NULL, OPT_TOPOLOGY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *output = NULL, *topology_file = NULL;
	char *out_alloc = NULL, *xml = NULL;
	int want_topology = 0, level_set = 0, codec_set = 0, c, rc;
	mpxkit_pcz_options opt;
	mpxkit_diag diag = { 0 };
	long v;

	mpxkit_pcz_options_init(&opt);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:c:l:t:g:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'c':
			if (parse_codec(optarg, &opt.codec) != 0)
				return cli_usage_error(cmd, "unknown codec '%s'", optarg);
			codec_set = 1;
			break;
		case 'l':
			if (cli_option_long(cmd, "--level", optarg, -7, 22, &v) != CLI_OK)
				return CLI_USAGE;
			opt.level = (int)v;
			level_set = 1;
			break;
		case 't':
			if (parse_threshold(optarg, &opt.threshold_ppm) != 0)
				return cli_usage_error(cmd, "threshold '%s' is not in [0, 1]", optarg);
			break;
		case 'g':
			if (parse_grouping(optarg, &opt.grouping) != 0)
				return cli_usage_error(cmd, "unknown grouping '%s'", optarg);
			break;
		case OPT_CHUNK:
			if (cli_option_long(cmd, "--chunk-size", optarg, 1024, MPXKIT_PCZ_MAX_SECTION / 4,
					    &v) != CLI_OK)
				return CLI_USAGE;
			opt.chunk_size = (size_t)v;
			break;
		case OPT_TOPOLOGY:
			want_topology = 1;
			topology_file = optarg;
			break;
		case 'h':
			pack_usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "need exactly one input file");
	/* A level or groups belong to the version-1 codecs: without -c they mean zstd. */
	if (!codec_set && (level_set || opt.grouping != MPXKIT_PCZ_GROUP_NONE))
		opt.codec = MPXKIT_PCZ_ZSTD;
	if (opt.codec == MPXKIT_PCZ_MODEL && level_set)
		return cli_usage_error(cmd, "the model codec has no level (-l is for zstd and zlib)");
	if (opt.codec == MPXKIT_PCZ_MODEL && opt.grouping != MPXKIT_PCZ_GROUP_NONE)
		return cli_usage_error(cmd, "grouping needs a version-1 codec (-c zstd, zlib or stored)");
	if (level_set && opt.codec == MPXKIT_PCZ_ZLIB && (opt.level < 1 || opt.level > 9))
		return cli_usage_error(cmd, "zlib level must be 1..9");
	if (output == NULL && strcmp(argv[optind], "-") == 0)
		return cli_usage_error(cmd, "reading standard input needs -o");
	if (output == NULL)
		output = out_alloc = default_output(argv[optind]);
	if (output == NULL)
		return cli_error(cmd, "out of memory");
	{
		const char *inputs[] = {argv[optind], topology_file};
		if (cli_check_outputs(cmd, &output, 1, inputs, 2) != CLI_OK) {
			free(out_alloc);
			return CLI_FAIL;
		}
	}
	if (topology_file) {
		xml = read_text_file(topology_file, cmd);
		if (xml == NULL) {
			free(out_alloc);
			return CLI_FAIL;
		}
	}
	rc = mpxkit_pcz_pack_csv(argv[optind], output, &opt,
				 want_topology ? (xml ? xml : "") : NULL, &diag);
	free(xml);
	free(out_alloc);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	return CLI_OK;
}

static int open_reader(const char *cmd, const char *path, mpxkit_pcz_reader **r)
{
	mpxkit_diag diag = { 0 };
	int rc = mpxkit_pcz_reader_open(path, r, &diag);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	return CLI_OK;
}

/* Decodes every region once, so that nothing is written from a file that fails late. */
static int check_regions(const char *cmd, mpxkit_pcz_reader *r, mpxkit_pcz_stats *st)
{
	const mpxkit_pcz_region *reg;
	mpxkit_diag diag = { 0 };
	int rc;

	while ((rc = mpxkit_pcz_reader_next(r, &reg, &diag)) == 1)
		;
	if (st)
		mpxkit_pcz_reader_stats(r, st);
	return rc < 0 ? cli_lib_error(cmd, rc, &diag) : CLI_OK;
}

static int check_all(const char *cmd, const char *path, mpxkit_pcz_stats *st)
{
	mpxkit_pcz_reader *r;
	int rc = open_reader(cmd, path, &r);

	if (rc != CLI_OK)
		return rc;
	rc = check_regions(cmd, r, st);
	mpxkit_pcz_reader_free(r);
	return rc;
}

static int write_file_atomic(const char *cmd, const char *path, const char *text, size_t len)
{
	mpxkit_diag diag = { 0 };
	int rc = mpxkit_outfile_write_all(path, text, len, &diag);

	return rc < 0 ? cli_lib_error(cmd, rc, &diag) : CLI_OK;
}

static int unpack_to(const char *cmd, mpxkit_pcz_reader *r, const char *output)
{
	mpxkit_diag diag = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	if (output == NULL || strcmp(output, "-") == 0) {
		rc = mpxkit_pcz_write_csv(r, stdout, &diag);
		if (rc < 0)
			return cli_lib_error(cmd, rc, &diag);
		return cli_close_stdout(cmd);
	}
	mem = open_memstream(&text, &len);
	if (mem == NULL)
		return cli_error(cmd, "out of memory");
	rc = mpxkit_pcz_write_csv(r, mem, &diag);
	if (fclose(mem) != 0 && rc == 0)
		rc = mpxkit_fail(&diag, MPXKIT_ENOMEM, "out of memory");
	if (rc < 0) {
		free(text);
		return cli_lib_error(cmd, rc, &diag);
	}
	rc = write_file_atomic(cmd, output, text, len);
	free(text);
	return rc;
}

static void unpack_usage(FILE *out)
{
	fprintf(out, "usage: mpxkit unpack [OPTIONS] IN.pcz [-o OUT.csv]\n\n"
		     "Decode a .pcz dump back into CSV: the same metadata lines, header and rows.\n\n"
		     "Options:\n"
		     "  -o, --output=FILE      write the CSV there (default: standard output)\n"
		     "      --topology=FILE    also write the stored hwloc XML topology to FILE\n"
		     "  -h, --help             show this help\n");
}

int cmd_unpack(int argc, char **argv)
{
	enum { OPT_TOPOLOGY = 256 };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "topology", required_argument, NULL, OPT_TOPOLOGY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *output = NULL, *topology = NULL;
	mpxkit_pcz_reader *checked, *r;
	mpxkit_diag diag = { 0 };
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_TOPOLOGY:
			topology = optarg;
			break;
		case 'h':
			unpack_usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "need exactly one .pcz file");
	{
		const char *outputs[] = {output, topology};
		if (cli_check_outputs(cmd, outputs, 2, (const char *const *)argv + optind, 1) !=
		    CLI_OK)
			return CLI_FAIL;
	}
	/* One read of the bytes (standard input arrives once), decoded twice. */
	rc = open_reader(cmd, argv[optind], &checked);
	if (rc != CLI_OK)
		return rc;
	rc = check_regions(cmd, checked, NULL);
	if (rc == CLI_OK && (rc = mpxkit_pcz_reader_reopen(checked, &r, &diag)) < 0)
		rc = cli_lib_error(cmd, rc, &diag);
	if (rc != CLI_OK) {
		mpxkit_pcz_reader_free(checked);
		return rc;
	}
	if (topology) {
		size_t len;
		const char *xml = mpxkit_pcz_reader_topology(r, &len);
		rc = xml ? write_file_atomic(cmd, topology, xml, len)
			 : cli_error(cmd, "%s holds no topology", argv[optind]);
	}
	if (rc == CLI_OK)
		rc = unpack_to(cmd, r, output);
	mpxkit_pcz_reader_free(r);
	mpxkit_pcz_reader_free(checked);
	return rc;
}

static void print_section(const char *name, uint64_t stored, uint64_t raw, uint64_t total)
{
	printf("  %-10s %12" PRIu64 " %12" PRIu64 " %7.2f%%\n", name, stored, raw,
	       total ? 100.0 * (double)stored / (double)total : 0.0);
}

static void info_usage(FILE *out)
{
	fprintf(out, "usage: mpxkit info IN.pcz\n\n"
		     "Show a .pcz dump's metadata, events, regions, units, groups, compression\n"
		     "ratio and the size of each section.\n\n"
		     "Options:\n  -h, --help             show this help\n");
}

/* Version 2: the REGIONS bytes each column and the structure took, in column order. */
static void print_columns(mpxkit_pcz_reader *r, const mpxkit_pcz_stats *st)
{
	size_t E = mpxkit_pcz_reader_n_events(r);
	uint64_t bits;

	for (size_t col = 0; col < E + 3; col++) {
		size_t c = col == E + 2 ? SIZE_MAX : col;
		const char *name = col == 0	? "(starts)"
				   : col == 1	? "(durations)"
				   : c == SIZE_MAX ? "(structure)"
						   : mpxkit_pcz_reader_event(r, col - 2);
		if (mpxkit_pcz_reader_coded_bits(r, c, &bits) < 0)
			return;
		printf("    %-12.12s %10.0f %20s %7.2f%%\n", name, (double)bits / 8, "",
		       st->file_size ? 100.0 * (double)bits / 8 / (double)st->file_size : 0.0);
	}
}

static void print_info(const char *path, mpxkit_pcz_reader *r, const mpxkit_pcz_stats *st)
{
	uint64_t packed = (st->n_values + 2 * st->n_steps) * 8;
	size_t topo_len;
	const char *k, *v;

	printf("file:       %s\n", path);
	printf("format:     pcz version %u, codecs:%s%s%s%s\n", st->version,
	       st->codecs & (1u << MPXKIT_PCZ_STORED) ? " stored" : "",
	       st->codecs & (1u << MPXKIT_PCZ_ZLIB) ? " zlib" : "",
	       st->codecs & (1u << MPXKIT_PCZ_ZSTD) ? " zstd" : "",
	       st->codecs & (1u << MPXKIT_PCZ_MODEL) ? " model" : "");
	for (size_t i = 0; mpxkit_pcz_reader_meta(r, i, &k, &v) == 0; i++)
		printf("meta:       %s=%s\n", k, v);
	printf("events:     %zu:", mpxkit_pcz_reader_n_events(r));
	for (size_t e = 0; e < mpxkit_pcz_reader_n_events(r); e++)
		printf(" %s", mpxkit_pcz_reader_event(r, e));
	printf("\nplacement:  %s\n", mpxkit_pcz_reader_placement(r) ? "cpu and numa per unit"
								    : "none");
	printf("intervals:  %s\n", mpxkit_pcz_reader_intervals(r)
					? "each estimate with its bounds (NAME, NAME.lo, NAME.hi)"
					: "none");
	printf("topology:   %s\n",
	       mpxkit_pcz_reader_topology(r, &topo_len) ? "hwloc XML stored" : "none");
	printf("regions:    %" PRIu64 "\n", st->n_regions);
	printf("units:      %" PRIu64 " (%" PRIu64 " in %" PRIu64 " groups, %" PRIu64 " raw)\n",
	       st->n_units, st->n_grouped, st->n_groups, st->n_raw);
	printf("values:     %" PRIu64 " counters and %" PRIu64 " timestamps, %" PRIu64
	       " bytes as 64-bit integers\n",
	       st->n_values, 2 * st->n_steps, packed);
	printf("ratio:      %.2f (those bytes / file size)\n",
	       st->file_size ? (double)packed / (double)st->file_size : 0.0);
	printf("sections:   %-10s %12s %12s %8s\n", "", "stored", "raw", "of file");
	print_section("header", st->header_size, st->header_size, st->file_size);
	if (st->meta_file)
		print_section("META", st->meta_file, st->meta_raw, st->file_size);
	if (st->topology_file)
		print_section("TOPOLOGY", st->topology_file, st->topology_raw, st->file_size);
	print_section("EVENTS", st->events_file, st->events_raw, st->file_size);
	print_section("REGIONS", st->regions_file, st->regions_raw, st->file_size);
	print_columns(r, st);
	print_section("END", st->end_size, st->end_raw, st->file_size);
	printf("  (stored sizes include each section's frame and checksums; %" PRIu64
	       " REGIONS sections%s)\n",
	       st->n_region_sections,
	       st->version >= 2 ? ", their raw size is their values as 64-bit integers" : "");
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag diag = { 0 };
	mpxkit_pcz_stats st;
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			info_usage(stdout);
			return cli_close_stdout(cmd);
		}
		return cli_option_error(cmd, c, argv);
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "need exactly one .pcz file");
	rc = open_reader(cmd, argv[optind], &r);
	if (rc != CLI_OK)
		return rc;
	mpxkit_pcz_reader_count_bits(r); /* for the bytes of each column */
	/* Every region is decoded (and so checked) before anything is printed. */
	while ((rc = mpxkit_pcz_reader_next(r, &reg, &diag)) == 1)
		;
	if (rc < 0) {
		rc = cli_lib_error(cmd, rc, &diag);
	} else {
		mpxkit_pcz_reader_stats(r, &st);
		print_info(argv[optind], r, &st);
		rc = cli_close_stdout(cmd);
	}
	mpxkit_pcz_reader_free(r);
	return rc;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	mpxkit_pcz_stats st;
	int c, quiet = 0, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		if (c == 'q') {
			quiet = 1;
			continue;
		}
		if (c == 'h') {
			printf("usage: mpxkit verify [-q] IN.pcz...\n\n"
			       "Check every length, checksum and region of .pcz dumps; exit 0 when\n"
			       "all are intact, 2 at the first damaged one.\n\n"
			       "Options:\n  -q, --quiet            print nothing on success\n"
			       "  -h, --help             show this help\n");
			return cli_close_stdout(cmd);
		}
		return cli_option_error(cmd, c, argv);
	}
	if (optind >= argc)
		return cli_usage_error(cmd, "need at least one .pcz file");
	for (int i = optind; i < argc; i++) {
		rc = check_all(cmd, argv[i], &st);
		if (rc != CLI_OK)
			return rc;
		if (!quiet)
			printf("%s: OK, %" PRIu64 " region%s, %" PRIu64 " unit%s\n", argv[i],
			       st.n_regions, cli_s(st.n_regions), st.n_units, cli_s(st.n_units));
	}
	return cli_close_stdout(cmd);
}
