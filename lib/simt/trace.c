/* SPDX-License-Identifier: BSD-3-Clause */
/* Streamed reader of Accel-Sim/NVBit traces: kernelslist.g and kernel-N.traceg (doc/simt.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpxkit/reader.h"
#include "simt_impl.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define TRACE_MAX_LINE	  (1u << 20)
#define MAX_OPCODES	  (1u << 16)
#define MAX_OPCODE_LEN	  63
#define MAX_NAME_LEN	  4095
#define MAX_BLOCK_THREADS 2048
#define LIST_MAX_BYTES	  (64u << 20)
#define MEMO_TEXT	  64	    /* the longest line start a memo holds */
#define LINE_SLACK	  MEMO_TEXT /* readable bytes after a copied line's NUL */

/* ---- lines: from the shared reader, or from a buffer (tests, fuzzing) ----------------------- */

/*
 * Every line handed to the parsers ends in a NUL at its length (after a CR is
 * removed), so the scanners below stop at the first byte that does not belong
 * to a token without checking the length at every byte.
 */
typedef struct lines {
	mpxkit_reader *r;
	char *wstart, *wp, *wend; /* reader: the window of whole lines, and the next line in it */
	uint64_t wlines;	  /* lines taken from the window */
	const char *buf;
	size_t len, pos;
	uint64_t lineno;
	char *name;
	char *copy; /* buffer mode: the current line, NUL-terminated, LINE_SLACK bytes after */
	size_t copy_cap;
} lines;

/* The reader's next window of whole lines, after marking the last one read: 1, 0, or a code. */
static int next_window(lines *l, mpxkit_diag *diag)
{
	size_t n;
	int rc;

	if (l->wstart)
		mpxkit_reader_skip(l->r, (size_t)(l->wend - l->wstart), l->wlines);
	l->wstart = l->wp = l->wend = NULL;
	l->wlines = 0;
	if ((rc = mpxkit_reader_lines(l->r, &l->wstart, &n, diag)) <= 0) {
		l->wstart = NULL;
		return rc;
	}
	l->wp = l->wstart;
	l->wend = l->wstart + n;
	return 1;
}

/* The next line without its LF or a CR before it: 1, 0 at the end, or a negative code. */
static int next_line(lines *l, char **line, size_t *len, mpxkit_diag *diag)
{
	size_t n;

	if (l->r) {
		char *nl;
		int rc;
		if (l->wp == l->wend && (rc = next_window(l, diag)) <= 0)
			return rc;
		nl = memchr(l->wp, '\n', (size_t)(l->wend - l->wp)); /* every line of it has one */
		*line = l->wp;
		*len = (size_t)(nl - l->wp);
		*nl = '\0';
		l->wp = nl + 1;
		l->wlines++;
		l->lineno++;
	} else {
		const char *nl, *src;
		if (l->pos >= l->len)
			return 0;
		src = l->buf + l->pos;
		nl = memchr(src, '\n', l->len - l->pos);
		n = nl ? (size_t)(nl - src) : l->len - l->pos;
		l->lineno++;
		if (n > TRACE_MAX_LINE)
			return mpxkit_fail(diag, MPXKIT_ERANGE,
					   "%s:%llu: line longer than %u bytes", l->name,
					   (unsigned long long)l->lineno, TRACE_MAX_LINE);
		l->pos += n + (nl ? 1 : 0);
		if (memchr(src, '\0', n) != NULL)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%llu: NUL byte: not a text file", l->name,
					   (unsigned long long)l->lineno);
		if (n + 1 + LINE_SLACK > l->copy_cap) {
			size_t cap = l->copy_cap ? l->copy_cap : 256;
			char *g;
			while (cap < n + 1 + LINE_SLACK)
				cap *= 2;
			if ((g = realloc(l->copy, cap)) == NULL)
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory",
						   l->name);
			/* defined bytes for the read-ahead, whatever the lines leave there */
			memset(g + l->copy_cap, 0, cap - l->copy_cap);
			l->copy = g;
			l->copy_cap = cap;
		}
		memcpy(l->copy, src, n);
		l->copy[n] = '\0';
		*line = l->copy;
		*len = n;
	}
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*line)[--*len] = '\0';
	return 1;
}

/* How far the bytes from the last line can be read: the window's end, or the copy's. */
static const char *readable_end(const lines *l)
{
	return l->r ? l->wend : l->copy + l->copy_cap;
}

static int lines_open(lines *l, const char *path, const char *what, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT | MPXKIT_READER_GZIP, 0, TRACE_MAX_LINE,
				     what};

	memset(l, 0, sizeof *l);
	l->name = strdup(path);
	if (l->name == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	return mpxkit_reader_open(&l->r, path, &opt, diag);
}

static void lines_close(lines *l)
{
	mpxkit_reader_close(l->r);
	free(l->copy);
	free(l->name);
	memset(l, 0, sizeof *l);
}

/* ---- number parsing: strict, bounded, each token followed by a blank or the end -------------- */

/*
 * The scanners run several times per instruction line: inlined, they cost a
 * few loads each.  A digit run stops at the first byte that is not a digit:
 * every caller's end is a NUL, a blank or a delimiter, so the run never
 * crosses it and the loops need no length check.
 */
#define HOT static inline __attribute__((always_inline))

HOT int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

HOT const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

HOT int at_end_of_token(const char *p, const char *end)
{
	return p == end || is_blank(*p);
}

/* Hex digit values, -1 for anything else: one load per digit in the hot loop. */
static const signed char hex_digit[256] = {
    ['0'] = 1,	['1'] = 2,  ['2'] = 3,	['3'] = 4,  ['4'] = 5,	['5'] = 6,  ['6'] = 7,	['7'] = 8,
    ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
}; /* value + 1, so that the zero of an unlisted byte means "not a digit" */

/* A run of hex digits from p: where it stops; *v its value (only the last 16 digits count). */
HOT const char *scan_hex(const char *p, uint64_t *v)
{
	uint64_t x = 0;
	int d;

	while ((d = hex_digit[(unsigned char)*p]) != 0) {
		x = x << 4 | (uint64_t)(d - 1);
		p++;
	}
	*v = x;
	return p;
}

/* A run of more than 19 decimal digits: only 20 digits up to 18446744073709551615 fit. */
static int dec_long(const char *start, const char *p, uint64_t *out)
{
	uint64_t v = 0;

	if (p - start > 20)
		return -1;
	for (; start < p; start++) {
		unsigned dg = (unsigned)(*start - '0');
		if (v > (UINT64_MAX - dg) / 10)
			return -1;
		v = v * 10 + dg;
	}
	*out = v;
	return 0;
}

/*
 * A run of decimal digits from *pp: its length (0: none), or -1 when it
 * exceeds 2^64 - 1; *pp moves past it.  Up to 19 digits accumulate without
 * an overflow check.
 */
HOT int scan_dec(const char **pp, uint64_t *v)
{
	const char *p = *pp, *start = p;
	uint64_t x = 0;
	unsigned dg;

	while ((dg = (unsigned)(*p - '0')) < 10) {
		x = x * 10 + dg;
		p++;
	}
	if (p - start > 19 && dec_long(start, p, &x) < 0)
		return -1;
	*v = x;
	*pp = p;
	return (int)(p - start);
}

/* Hex of 1 to max_digits digits (a 0x prefix allowed when prefix is 1). */
HOT int get_hex(const char **pp, const char *end, int max_digits, int prefix, uint64_t *out)
{
	const char *p = skip_blanks(*pp, end), *start;
	uint64_t v;

	if (prefix && end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	start = p;
	p = scan_hex(p, &v);
	if (p == start || p - start > max_digits || !at_end_of_token(p, end))
		return -1;
	*out = v;
	*pp = p;
	return 0;
}

/* A decimal in [0, max]. */
HOT int get_dec(const char **pp, const char *end, uint64_t max, uint64_t *out)
{
	const char *p = skip_blanks(*pp, end);
	uint64_t v;

	if (scan_dec(&p, &v) <= 0 || v > max || !at_end_of_token(p, end))
		return -1;
	*out = v;
	*pp = p;
	return 0;
}

/*
 * The instruction line's tokens.  The line ends in a NUL with no blank
 * before it (mpxkit_simt_trace_next trims it), so a token ends at a blank or
 * the NUL, and blanks are skipped without a bound: the same rules as the
 * get_ functions above with end at the NUL, in fewer steps.  A token that
 * ends at a blank is left past that blank (tok_past), so the next token's
 * skip usually finds it at once.
 */
HOT const char *tok_start(const char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* A token ends at a blank or the line's end: its NUL, or its LF when read in place. */
HOT int tok_end(char c)
{
	return c == ' ' || c == '\t' || c == '\0' || c == '\n';
}

/* Past the blank that ends a token (p is at a blank or the line's end). */
HOT const char *tok_past(const char *p)
{
	return p + is_blank(*p);
}

HOT int tok_hex(const char **pp, int max_digits, int prefix, uint64_t *out)
{
	const char *p = tok_start(*pp), *start;
	uint64_t v;

	if (prefix && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && p[2] != '\0' && p[2] != '\n')
		p += 2;
	start = p;
	p = scan_hex(p, &v);
	if (p == start || p - start > max_digits || !tok_end(*p))
		return -1;
	*out = v;
	*pp = tok_past(p);
	return 0;
}

HOT int tok_dec(const char **pp, uint64_t max, uint64_t *out)
{
	const char *p = tok_start(*pp);
	uint64_t v;

	if (scan_dec(&p, &v) <= 0 || v > max || !tok_end(*p))
		return -1;
	*out = v;
	*pp = tok_past(p);
	return 0;
}

/* A signed decimal in [-2^(bits-1), 2^(bits-1) - 1], bits <= 64. */
HOT int tok_sdec(const char **pp, int bits, int64_t *out)
{
	const char *p = tok_start(*pp);
	int neg = 0;
	uint64_t mag, lim = (uint64_t)1 << (bits - 1);

	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
		if (*p < '0' || *p > '9')
			return -1;
	}
	if (tok_dec(&p, neg ? lim : lim - 1, &mag) < 0)
		return -1;
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	*pp = p;
	return 0;
}

/* R0 to R255. */
HOT int tok_reg(const char **pp, uint8_t *out)
{
	const char *p = tok_start(*pp);
	uint64_t v;

	if (p[0] != 'R' || p[1] < '0' || p[1] > '9')
		return -1;
	p++;
	if (scan_dec(&p, &v) <= 0 || v > 255 || !tok_end(*p))
		return -1;
	*out = (uint8_t)v;
	*pp = tok_past(p);
	return 0;
}

/* ---- kernelslist.g -------------------------------------------------------------------------- */

void mpxkit_simt_commands_free(mpxkit_simt_commands *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->cmd[i].path);
	free(c->cmd);
	free(c);
}

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n >= t && memcmp(s + n - t, tail, t) == 0;
}

static int parse_memcpy(const char *p, const char *end, uint64_t *addr, uint64_t *size)
{
	const char *comma = memchr(p, ',', (size_t)(end - p));
	const char *q;

	if (comma == NULL || end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return -1;
	q = p;
	if (get_hex(&q, comma, 16, 1, addr) < 0 || q != comma)
		return -1;
	q = comma + 1;
	if (q == end || *q < '0' || *q > '9' || get_dec(&q, end, (uint64_t)1 << 48, size) < 0 ||
	    q != end)
		return -1;
	return 0;
}

/*
 * "MemcpyHtoD,..." or "MemcpyDtoH,..." into cmd: the address and size, and a
 * copy [addr, addr + size) that ends past 2^64 refused (no device address
 * space holds it).
 */
static int memcpy_line(const char *line, const char *end, mpxkit_simt_command *cmd,
		       const char *list, uint64_t no, mpxkit_diag *diag)
{
	if (parse_memcpy(line + 11, end, &cmd->addr, &cmd->size) < 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%llu: '%.10s,0xADDRESS,BYTES' expected", list,
				   (unsigned long long)no, line);
	if (cmd->size > 0 && cmd->addr > UINT64_MAX - (cmd->size - 1))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%llu: %.10s of %llu bytes at 0x%llx ends past 2^64", list,
				   (unsigned long long)no, line, (unsigned long long)cmd->size,
				   (unsigned long long)cmd->addr);
	return 0;
}

int mpxkit_simt_commands_read(const char *path, mpxkit_simt_commands **out, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT, LIST_MAX_BYTES, 4096, "kernel list"};
	mpxkit_simt_commands *c = NULL;
	char *list = NULL, *dir = NULL;
	size_t cap = 0;
	struct stat st;
	lines l;
	int rc;

	memset(&l, 0, sizeof l);
	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "kernel list: missing argument");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		dir = strdup(path);
		list = malloc(strlen(path) + sizeof "/kernelslist.g");
		if (list)
			sprintf(list, "%s/kernelslist.g", path);
	} else {
		const char *slash = strrchr(path, '/');
		list = strdup(path);
		dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	}
	c = calloc(1, sizeof *c);
	if (list == NULL || dir == NULL || c == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	l.name = list;
	if ((rc = mpxkit_reader_open(&l.r, list, &opt, diag)) < 0) {
		l.name = NULL;
		goto fail;
	}
	for (;;) {
		char *line;
		const char *end;
		size_t n;
		mpxkit_simt_command cmd = {0, 0, 0, NULL};
		if ((rc = next_line(&l, &line, &n, diag)) < 0)
			goto fail;
		if (rc == 0)
			break;
		if (n == 0)
			continue;
		end = line + n;
		if (n > 11 && (memcmp(line, "MemcpyHtoD,", 11) == 0 ||
			       memcmp(line, "MemcpyDtoH,", 11) == 0)) {
			if ((rc = memcpy_line(line, end, &cmd, list, l.lineno, diag)) < 0)
				goto fail;
			if (line[6] == 'D') /* DtoH: nothing for the model to do */
				continue;
		} else if (n > 6 && memcmp(line, "kernel", 6) == 0 &&
			   memchr(line, '/', n) == NULL &&
			   (ends_with(line, n, ".traceg") || ends_with(line, n, ".traceg.gz"))) {
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)line[i] <= ' ' ||
				    (unsigned char)line[i] >= 0x7f) {
					rc = mpxkit_fail(
					    diag, MPXKIT_EFORMAT,
					    "%s:%llu: kernel file name with a blank or control "
					    "character",
					    list, (unsigned long long)l.lineno);
					goto fail;
				}
			cmd.is_kernel = 1;
			cmd.path = malloc(strlen(dir) + n + 2);
			if (cmd.path == NULL) {
				rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", list);
				goto fail;
			}
			sprintf(cmd.path, "%s/%.*s", dir, (int)n, line);
		} else {
			rc =
			    mpxkit_fail(diag, MPXKIT_EFORMAT,
					"%s:%llu: neither 'MemcpyHtoD,...', 'MemcpyDtoH,...' nor a "
					"kernel-N.traceg file name",
					list, (unsigned long long)l.lineno);
			goto fail;
		}
		if (c->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			mpxkit_simt_command *g = realloc(c->cmd, ncap * sizeof *g);
			if (g == NULL) {
				free(cmd.path);
				rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", list);
				goto fail;
			}
			c->cmd = g;
			cap = ncap;
		}
		c->cmd[c->n++] = cmd;
	}
	mpxkit_reader_close(l.r);
	free(list);
	free(dir);
	*out = c;
	return 0;
fail:
	mpxkit_reader_close(l.r);
	free(list);
	free(dir);
	mpxkit_simt_commands_free(c);
	return rc;
}

/* ---- kernel traces -------------------------------------------------------------------------- */

enum state { S_BETWEEN, S_BLOCK_HEAD, S_IN_BLOCK, S_INSTS, S_DONE };

/*
 * The start of an instruction line, from its first byte to the memory width,
 * as last parsed, by the line's first 16 bytes (the PC and mask of the
 * tracer's lines).  A loop's lines repeat it byte for byte at every
 * iteration and in every warp, and the same bytes parse to the same fields,
 * so a line that starts with the memo's text (its width token ending where
 * the memo's did) takes the fields without parsing them, and only the
 * addresses and what follows are parsed.  The fields that depend on more
 * than the bytes (the mask against the warp's lanes, the old prefix against
 * the block and warp) are checked again.
 */
#define MEMO_SLOTS 1024
struct line_memo {
	char text[MEMO_TEXT];
	uint64_t pc;
	uint32_t mask, opcode, source_line;
	uint32_t pre[4]; /* tracer versions 2: the block and warp the line names */
	uint8_t len;	 /* 0: empty */
	uint8_t n_dst, n_src, mem_width;
	uint8_t dst[MPXKIT_SIMT_MAX_REGS], src[MPXKIT_SIMT_MAX_REGS];
};

struct mpxkit_simt_trace {
	lines l;
	mpxkit_simt_kernel k;
	enum state state;
	uint32_t block[3];
	uint32_t warp;
	uint32_t warp_lanes; /* mask of the lanes the current warp has */
	uint64_t warps_seen; /* in the current block */
	uint64_t left, announced;
	uint64_t blocks;
	/* interned opcodes */
	char **op_names;
	uint8_t *op_len; /* strlen of each name (at most MAX_OPCODE_LEN) */
	uint32_t n_ops, op_cap;
	uint32_t *op_hash; /* open addressing: id + 1, 0 empty */
	uint32_t hash_cap;
	mpxkit_simt_inst inst;
	struct line_memo *memo; /* MEMO_SLOTS, by a line's first bytes */
};

/* "FILE:LINE: message" for the line just read. */
#define TFAIL(t, diag, code, ...)                                                                  \
	mpxkit_fail(diag, code, "%s:%llu: %s", (t)->l.name, (unsigned long long)(t)->l.lineno,     \
		    mpxkit__simt_fmt(__VA_ARGS__))

const char *mpxkit__simt_fmt(const char *fmt, ...)
{
	static __thread char buf[MPXKIT_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return buf;
}

/* FNV-1a, step by step: the opcode scanner folds it into its validation loop. */
#define FNV_START 2166136261u
HOT uint32_t fnv_step(uint32_t h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = FNV_START;
	for (size_t i = 0; i < n; i++)
		h = fnv_step(h, (unsigned char)s[i]);
	return h;
}

/* The id of an opcode's text (h its fnv1a), added when new; -1 out of memory, -2 too many. */
static int64_t intern(mpxkit_simt_trace *t, const char *s, size_t n, uint32_t h)
{
	uint32_t i;

	if (t->hash_cap == 0 || (t->n_ops + 1) * 2 > t->hash_cap) {
		uint32_t ncap = t->hash_cap ? t->hash_cap * 2 : 256;
		uint32_t *nh = calloc(ncap, sizeof *nh);
		if (nh == NULL)
			return -1;
		for (uint32_t id = 0; id < t->n_ops; id++) {
			uint32_t j = fnv1a(t->op_names[id], t->op_len[id]) & (ncap - 1);
			while (nh[j])
				j = (j + 1) & (ncap - 1);
			nh[j] = id + 1;
		}
		free(t->op_hash);
		t->op_hash = nh;
		t->hash_cap = ncap;
	}
	for (i = h & (t->hash_cap - 1); t->op_hash[i]; i = (i + 1) & (t->hash_cap - 1)) {
		uint32_t id = t->op_hash[i] - 1;
		if (t->op_len[id] == n && memcmp(t->op_names[id], s, n) == 0)
			return id;
	}
	if (t->n_ops == MAX_OPCODES)
		return -2;
	if (t->n_ops == t->op_cap) {
		uint32_t ncap = t->op_cap ? t->op_cap * 2 : 64;
		char **nn = realloc(t->op_names, ncap * sizeof *nn);
		uint8_t *nl;
		if (nn == NULL)
			return -1;
		t->op_names = nn;
		if ((nl = realloc(t->op_len, ncap * sizeof *nl)) == NULL)
			return -1;
		t->op_len = nl;
		t->op_cap = ncap;
	}
	if ((t->op_names[t->n_ops] = strndup(s, n)) == NULL)
		return -1;
	t->op_len[t->n_ops] = (uint8_t)n;
	t->op_hash[i] = t->n_ops + 1;
	return t->n_ops++;
}

const char *mpxkit_simt_trace_opcode(const mpxkit_simt_trace *t, uint32_t id)
{
	return t && id < t->n_ops ? t->op_names[id] : NULL;
}

uint32_t mpxkit_simt_trace_n_opcodes(const mpxkit_simt_trace *t)
{
	return t ? t->n_ops : 0;
}

const mpxkit_simt_kernel *mpxkit_simt_trace_kernel(const mpxkit_simt_trace *t)
{
	return &t->k;
}

const char *mpxkit_simt_trace_name(const mpxkit_simt_trace *t)
{
	return t->l.name;
}

uint64_t mpxkit_simt_trace_line(const mpxkit_simt_trace *t)
{
	return t->l.lineno;
}

void mpxkit_simt_trace_close(mpxkit_simt_trace *t)
{
	if (t == NULL)
		return;
	lines_close(&t->l);
	for (uint32_t i = 0; i < t->n_ops; i++)
		free(t->op_names[i]);
	free(t->op_names);
	free(t->op_len);
	free(t->op_hash);
	free(t->memo);
	free(t->k.name);
	free(t);
}

/* ---- header --------------------------------------------------------------------------------- */

enum hkey {
	H_NAME,
	H_ID,
	H_GRID,
	H_BLOCK,
	H_SHMEM,
	H_NREGS,
	H_BINARY,
	H_STREAM,
	H_SHMEM_BASE,
	H_LOCAL_BASE,
	H_NVBIT,
	H_TRACER,
	H_LINEINFO,
	H_COUNT
};

static const char *const hkeys[H_COUNT] = {
    "kernel name",	   "kernel id",	     "grid dim",
    "block dim",	   "shmem",	     "nregs",
    "binary version",	   "cuda stream id", "shmem base_addr",
    "local mem base_addr", "nvbit version",  "accelsim tracer version",
    "enable lineinfo",
};

/* "(X,Y,Z)" with each in [1, max[i]]. */
static int parse_dim(const char *p, const char *end, const uint64_t *max, uint32_t *out)
{
	uint64_t v;

	if (p == end || *p++ != '(')
		return -1;
	for (int i = 0; i < 3; i++) {
		const char *stop = p;
		while (stop < end && *stop >= '0' && *stop <= '9')
			stop++;
		if (stop == p || stop == end || *stop != (i < 2 ? ',' : ')') ||
		    get_dec(&p, stop, max[i], &v) < 0 || v < 1)
			return -1;
		out[i] = (uint32_t)v;
		p = stop + 1;
	}
	return p == end ? 0 : -1;
}

static int header_value(mpxkit_simt_trace *t, int key, const char *v, const char *end,
			mpxkit_diag *diag)
{
	static const uint64_t grid_max[3] = {2147483647u, 65535, 65535};
	static const uint64_t block_max[3] = {MAX_BLOCK_THREADS, MAX_BLOCK_THREADS, 64};
	mpxkit_simt_kernel *k = &t->k;
	const char *p = v;
	uint64_t u;

	switch (key) {
	case H_NAME:
		if (end == v || end - v > MAX_NAME_LEN)
			return TFAIL(t, diag, MPXKIT_EFORMAT, "kernel name: 1 to %d bytes expected",
				     MAX_NAME_LEN);
		if ((k->name = strndup(v, (size_t)(end - v))) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", t->l.name);
		return 0;
	case H_GRID:
		if (parse_dim(v, end, grid_max, k->grid) < 0)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "grid dim: '(X,Y,Z)' with X below 2^31, Y and Z at most 65535 "
				     "expected");
		return 0;
	case H_BLOCK:
		if (parse_dim(v, end, block_max, k->block) < 0 ||
		    (uint64_t)k->block[0] * k->block[1] * k->block[2] > MAX_BLOCK_THREADS)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "block dim: '(X,Y,Z)' with at most %d threads expected",
				     MAX_BLOCK_THREADS);
		return 0;
	case H_SHMEM_BASE:
	case H_LOCAL_BASE:
		if (end - v < 3 || v[0] != '0' || v[1] != 'x' || get_hex(&p, end, 16, 1, &u) < 0 ||
		    p != end)
			return TFAIL(t, diag, MPXKIT_EFORMAT, "%s: a hex address '0x...' expected",
				     hkeys[key]);
		*(key == H_SHMEM_BASE ? &k->shmem_base : &k->local_base) = u;
		return 0;
	case H_NVBIT:
		if (end - v > 63)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "nvbit version: at most 63 bytes expected");
		return 0;
	default:
		break;
	}
	{
		static const uint64_t max[H_COUNT] = {
		    [H_ID] = 0xffffffffu, [H_SHMEM] = 0xffffffffu, [H_NREGS] = 256,
		    [H_BINARY] = 999,	  [H_STREAM] = UINT64_MAX, [H_TRACER] = 99,
		    [H_LINEINFO] = 1,
		};
		if (get_dec(&p, end, max[key], &u) < 0 || p != end)
			return TFAIL(t, diag, MPXKIT_ERANGE,
				     "%s: a whole number from 0 to %llu expected", hkeys[key],
				     (unsigned long long)max[key]);
	}
	switch (key) {
	case H_ID:
		k->id = (uint32_t)u;
		break;
	case H_SHMEM:
		k->shmem = (uint32_t)u;
		break;
	case H_NREGS:
		k->nregs = (uint32_t)u;
		break;
	case H_BINARY:
		if (u < 10)
			return TFAIL(t, diag, MPXKIT_ERANGE, "binary version: 10 to 999 expected");
		k->binary_version = (uint32_t)u;
		break;
	case H_STREAM:
		k->stream = u;
		break;
	case H_TRACER:
		if (u < 2 || u > 5)
			return TFAIL(t, diag, MPXKIT_EVERSION,
				     "accelsim tracer version %llu is not supported (2 to 5)",
				     (unsigned long long)u);
		k->tracer_version = (uint32_t)u;
		break;
	default:
		k->lineinfo = (int)u;
		break;
	}
	return 0;
}

static int header_line(mpxkit_simt_trace *t, const char *line, size_t n, unsigned *seen,
		       mpxkit_diag *diag)
{
	const char *end = line + n, *eq = memchr(line, '=', n), *ke, *v;
	size_t kn;

	if (eq == NULL)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "header line is not '-key = value'");
	ke = eq;
	while (ke > line + 1 && is_blank(ke[-1]))
		ke--;
	kn = (size_t)(ke - (line + 1));
	v = eq + 1;
	if (v < end && *v == ' ')
		v++;
	while (end > v && is_blank(end[-1]))
		end--;
	for (int k = 0; k < H_COUNT; k++)
		if (strlen(hkeys[k]) == kn && memcmp(hkeys[k], line + 1, kn) == 0) {
			if (*seen & (1u << k))
				return TFAIL(t, diag, MPXKIT_EFORMAT, "header key '%s' given twice",
					     hkeys[k]);
			*seen |= 1u << k;
			return header_value(t, k, v, end, diag);
		}
	return 0; /* a newer tracer's key: skipped */
}

static int is_word(const char *line, size_t n, const char *w)
{
	size_t wn = strlen(w);
	const char *p = line + wn;
	if (n < wn || memcmp(line, w, wn) != 0)
		return 0;
	while (p < line + n && is_blank(*p))
		p++;
	return p == line + n;
}

static int read_header(mpxkit_simt_trace *t, mpxkit_diag *diag)
{
	unsigned seen = 0;
	char *line;
	size_t n;
	int rc;
	mpxkit_simt_kernel *k = &t->k;

	for (;;) {
		if ((rc = next_line(&t->l, &line, &n, diag)) < 0)
			return rc;
		if (rc == 0)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s: no '#BEGIN_TB': the trace holds no thread block",
					   t->l.name);
		if (n == 0)
			continue;
		if (line[0] == '-') {
			if ((rc = header_line(t, line, n, &seen, diag)) < 0)
				return rc;
		} else if (line[0] == '#') {
			if (is_word(line, n, "#BEGIN_TB"))
				break;
			if (is_word(line, n, "#END_TB"))
				return TFAIL(t, diag, MPXKIT_EFORMAT,
					     "'#END_TB' before any '#BEGIN_TB'");
		} else {
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "'-key = value' header line expected");
		}
	}
	for (int key = 0; key < H_COUNT; key++)
		if ((key == H_NAME || key == H_GRID || key == H_BLOCK) && !(seen & (1u << key)))
			return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: header lacks '-%s'",
					   t->l.name, hkeys[key]);
	if (!(seen & (1u << H_TRACER)))
		k->tracer_version = 2;
	k->threads_per_block = k->block[0] * k->block[1] * k->block[2];
	k->warps_per_block = (k->threads_per_block + 31) / 32;
	k->n_blocks = (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
	t->state = S_BLOCK_HEAD;
	return 0;
}

static int trace_start(mpxkit_simt_trace *t, mpxkit_simt_trace **out, mpxkit_diag *diag)
{
	int rc = read_header(t, diag);

	if (rc == 0 && (t->memo = calloc(MEMO_SLOTS, sizeof *t->memo)) == NULL)
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", t->l.name);
	if (rc < 0) {
		mpxkit_simt_trace_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

int mpxkit_simt_trace_open(const char *path, mpxkit_simt_trace **out, mpxkit_diag *diag)
{
	mpxkit_simt_trace *t;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "kernel trace: missing argument");
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	if ((rc = lines_open(&t->l, path, "kernel trace", diag)) < 0) {
		mpxkit_simt_trace_close(t);
		return rc;
	}
	return trace_start(t, out, diag);
}

int mpxkit_simt_trace_open_buffer(const char *name, const char *buf, size_t len,
				  mpxkit_simt_trace **out, mpxkit_diag *diag)
{
	mpxkit_simt_trace *t;

	if (out == NULL || (buf == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "kernel trace: missing argument");
	t = calloc(1, sizeof *t);
	if (t == NULL || (t->l.name = strdup(name ? name : "trace")) == NULL) {
		free(t);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "kernel trace: out of memory");
	}
	t->l.buf = buf;
	t->l.len = len;
	return trace_start(t, out, diag);
}

/* ---- blocks, warps, instructions ------------------------------------------------------------ */

/* "WORD = REST" after optional blanks: REST, or NULL. */
static const char *after_equals(const char *line, size_t n, const char *word)
{
	size_t wn = strlen(word);
	const char *p = line + wn, *end = line + n;

	if (n <= wn || memcmp(line, word, wn) != 0 || !is_blank(*p))
		return NULL;
	p = skip_blanks(p, end);
	if (p == end || *p != '=')
		return NULL;
	return skip_blanks(p + 1, end);
}

static int parse_block_line(mpxkit_simt_trace *t, const char *line, size_t n, mpxkit_diag *diag)
{
	const char *end = line + n, *p = after_equals(line, n, "thread block");
	uint64_t v;

	while (end > line && is_blank(end[-1]))
		end--;
	if (p == NULL)
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "'thread block = X,Y,Z' expected after '#BEGIN_TB'");
	for (int i = 0; i < 3; i++) {
		const char *stop = p;
		while (stop < end && *stop >= '0' && *stop <= '9')
			stop++;
		if (stop == p || (i < 2 ? (stop == end || *stop != ',') : stop != end) ||
		    get_dec(&p, stop, 0xffffffffu, &v) < 0)
			return TFAIL(t, diag, MPXKIT_EFORMAT, "'thread block = X,Y,Z' expected");
		if (v >= t->k.grid[i])
			return TFAIL(t, diag, MPXKIT_ERANGE,
				     "thread block %c = %llu is outside the grid (%u)", "xyz"[i],
				     (unsigned long long)v, t -> k.grid[i]);
		t->block[i] = (uint32_t)v;
		p = stop + 1;
	}
	if (t->blocks == t->k.n_blocks)
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "more thread blocks than the grid's %llu (grid dim = (%u,%u,%u))",
			     (unsigned long long)t->k.n_blocks, t->k.grid[0], t->k.grid[1],
			     t->k.grid[2]);
	t->warps_seen = 0;
	t->blocks++;
	return 0;
}

static int parse_warp_lines(mpxkit_simt_trace *t, const char *warp_line, size_t n,
			    mpxkit_diag *diag)
{
	const char *end = warp_line + n, *p = after_equals(warp_line, n, "warp");
	char *line;
	uint64_t v;
	uint32_t have;
	int rc;

	if (p == NULL || get_dec(&p, end, 0xffffffffu, &v) < 0 || skip_blanks(p, end) != end)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "'warp = N' or '#END_TB' expected");
	if (v >= t->k.warps_per_block)
		return TFAIL(t, diag, MPXKIT_ERANGE, "warp %llu: the block has %u warps",
			     (unsigned long long)v, t->k.warps_per_block);
	if (t->warps_seen & (1ull << v))
		return TFAIL(t, diag, MPXKIT_EFORMAT, "warp %llu appears twice in this block",
			     (unsigned long long)v);
	t->warps_seen |= 1ull << v;
	t->warp = (uint32_t)v;
	have = t->k.threads_per_block - 32 * t->warp;
	t->warp_lanes = have >= 32 ? 0xffffffffu : (1u << have) - 1;
	do {
		if ((rc = next_line(&t->l, &line, &n, diag)) < 0)
			return rc;
		if (rc == 0)
			return mpxkit_fail(diag, MPXKIT_ETRUNC, "%s: ends after 'warp = %u'",
					   t->l.name, t->warp);
	} while (n == 0);
	end = line + n;
	p = after_equals(line, n, "insts");
	if (p == NULL || get_dec(&p, end, (uint64_t)1 << 40, &v) < 0 || skip_blanks(p, end) != end)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "'insts = K' expected after 'warp = %u'",
			     t->warp);
	t->left = t->announced = v;
	return 0;
}

/* Do base + i * step, i < lanes, and their widths all lie below 2^64? */
static int stride_fits(uint64_t base, int64_t step, uint32_t lanes, uint64_t width)
{
	uint64_t span = (uint64_t)(step < 0 ? -step : step) * (lanes - 1);

	if (step < 0)
		return base >= span && base <= UINT64_MAX - (width - 1);
	return base <= UINT64_MAX - (width - 1) - span;
}

/*
 * n addresses a, a + step, ...: four a round, as most masks are full, in two
 * 16-byte stores where the host has SSE2 (the sums wrap as uint64_t's do).
 */
HOT void fill_strided(uint64_t *dst, uint32_t n, uint64_t a, uint64_t step)
{
	uint32_t i = 0;

#ifdef __SSE2__
	__m128i x = _mm_set_epi64x((long long)(a + step), (long long)a);
	__m128i d2 = _mm_set1_epi64x((long long)(2 * step));
	__m128i d4 = _mm_set1_epi64x((long long)(4 * step));

	for (; i + 4 <= n; i += 4, a += 4 * step) {
		_mm_storeu_si128((__m128i *)(void *)&dst[i], x);
		_mm_storeu_si128((__m128i *)(void *)&dst[i + 2], _mm_add_epi64(x, d2));
		x = _mm_add_epi64(x, d4);
	}
#endif
	for (; i + 4 <= n; i += 4, a += 4 * step) {
		dst[i] = a;
		dst[i + 1] = a + step;
		dst[i + 2] = a + 2 * step;
		dst[i + 3] = a + 3 * step;
	}
	for (; i < n; i++, a += step)
		dst[i] = a;
}

/* Lane addresses of the set bits, from mode 0, 1 or 2. */
static int parse_addresses(mpxkit_simt_trace *t, const char **pp, mpxkit_diag *diag)
{
	mpxkit_simt_inst *in = &t->inst;
	uint32_t m = in->mask;
	uint64_t mode, a, width = in->mem_width;
	int64_t step = 0;

	if (tok_dec(pp, 2, &mode) < 0)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "address mode: 0, 1 or 2 expected");
	in->addr_mode = (int8_t)mode;
	if (mode == 0) {
		for (; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			if (tok_hex(pp, 16, 1, &a) < 0)
				return TFAIL(
				    t, diag, MPXKIT_EFORMAT,
				    "address of lane %d: a hex address expected (mode 0 lists one "
				    "per active lane)",
				    lane);
			if (a > UINT64_MAX - (width - 1))
				return TFAIL(t, diag, MPXKIT_ERANGE,
					     "address of lane %d wraps past 2^64", lane);
			in->addr[lane] = a;
		}
		return 0;
	}
	if (tok_hex(pp, 16, 1, &a) < 0)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "base address: hex expected");
	if (mode == 1) {
		if (tok_sdec(pp, 32, &step) < 0)
			return TFAIL(t, diag, MPXKIT_ERANGE,
				     "stride: a decimal in -2^31..2^31-1 expected");
		if (m != 0) {
			uint32_t shifted = m >> __builtin_ctz(m);
			if ((shifted & (shifted + 1)) != 0)
				return TFAIL(t, diag, MPXKIT_EFORMAT,
					     "address mode 1 with a non-contiguous mask %08x",
					     in->mask);
			/* the ends bound every lane: check them once, then fill without checks */
			if (stride_fits(a, step, mpxkit__simt_popcount(m), width)) {
				fill_strided(&in->addr[__builtin_ctz(m)], mpxkit__simt_popcount(m),
					     a, (uint64_t)step);
				return 0;
			}
		}
	}
	for (int k = 0; m; m &= m - 1, k++) {
		int lane = __builtin_ctz(m);
		if (k > 0) {
			if (mode == 2 && tok_sdec(pp, 64, &step) < 0)
				return TFAIL(
				    t, diag, MPXKIT_EFORMAT,
				    "delta of lane %d: a decimal expected (mode 2 gives one per "
				    "further active lane)",
				    lane);
			if (step < 0 ? a < (uint64_t)0 - (uint64_t)step
				     : a > UINT64_MAX - (uint64_t)step)
				return TFAIL(t, diag, MPXKIT_ERANGE,
					     "address of lane %d wraps past 2^64", lane);
			a += (uint64_t)step;
		}
		if (a > UINT64_MAX - (width - 1))
			return TFAIL(t, diag, MPXKIT_ERANGE, "address of lane %d wraps past 2^64",
				     lane);
		in->addr[lane] = a;
	}
	return 0;
}

HOT int parse_regs(mpxkit_simt_trace *t, const char **pp, uint8_t *n, uint8_t *regs,
		   const char *what, mpxkit_diag *diag)
{
	uint64_t v;

	if (tok_dec(pp, MPXKIT_SIMT_MAX_REGS, &v) < 0)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "%s register count: 0 to %d expected", what,
			     MPXKIT_SIMT_MAX_REGS);
	*n = (uint8_t)v;
	for (unsigned i = 0; i < v; i++)
		if (tok_reg(pp, &regs[i]) < 0)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "%s register %u of %llu: R0 to R255 expected", what, i + 1,
				     (unsigned long long)v);
	return 0;
}

/* The bytes of an opcode: letters, digits, '_' and '.'. */
static const unsigned char opcode_char[256] = {
#define R4(c) [c] = 1, [c + 1] = 1, [c + 2] = 1, [c + 3] = 1
#define R8(c) R4(c), R4(c + 4)
    R8('A'), R8('A' + 8), R8('A' + 16), ['Y'] = 1, ['Z'] = 1,
    R8('a'), R8('a' + 8), R8('a' + 16), ['y'] = 1, ['z'] = 1,
    R8('0'), ['8'] = 1,	  ['9'] = 1,	['_'] = 1, ['.'] = 1,
#undef R8
#undef R4
};

/* The middle of an instruction line: destinations, opcode, sources, memory width. */
HOT int parse_middle(mpxkit_simt_trace *t, const char **pp, mpxkit_diag *diag)
{
	mpxkit_simt_inst *in = &t->inst;
	const char *p = *pp, *op;
	uint64_t v;
	int64_t id;
	uint32_t h;
	int rc;

	if ((rc = parse_regs(t, &p, &in->n_dst, in->dst, "destination", diag)) < 0)
		return rc;
	p = tok_start(p);
	op = p;
	if (!((*op >= 'A' && *op <= 'Z') || (*op >= 'a' && *op <= 'z')))
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "opcode: 1 to %d characters starting with a letter expected",
			     MAX_OPCODE_LEN);
	for (h = FNV_START; opcode_char[(unsigned char)*p]; p++)
		h = fnv_step(h, (unsigned char)*p);
	if (!tok_end(*p)) {
		/* a byte that is not an opcode's: the whole token's length decides the message */
		const char *q = p;
		while (!tok_end(*q))
			q++;
		if (q - op <= MAX_OPCODE_LEN)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "opcode: only letters, digits, '_' and '.'");
		p = q;
	}
	if (p - op > MAX_OPCODE_LEN)
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "opcode: 1 to %d characters starting with a letter expected",
			     MAX_OPCODE_LEN);
	id = intern(t, op, (size_t)(p - op), h);
	if (id == -2)
		return TFAIL(t, diag, MPXKIT_ERANGE, "more than %u distinct opcodes", MAX_OPCODES);
	if (id < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", t->l.name);
	in->opcode = (uint32_t)id;
	if ((rc = parse_regs(t, &p, &in->n_src, in->src, "source", diag)) < 0)
		return rc;
	if (tok_dec(&p, 32, &v) < 0 ||
	    (v != 0 && v != 1 && v != 2 && v != 4 && v != 8 && v != 16 && v != 32))
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "memory width: 0, 1, 2, 4, 8, 16 or 32 expected");
	in->mem_width = (uint8_t)v;
	*pp = p;
	return 0;
}

/* The memo slot of a line, from its first 16 bytes (the caller can read MEMO_TEXT from it). */
HOT struct line_memo *memo_slot(const mpxkit_simt_trace *t, const char *line)
{
	uint64_t a, b;

	memcpy(&a, line, 8);
	memcpy(&b, line + 8, 8);
	return &t->memo[((a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full)) >> 54];
}

/*
 * Does the line start with the memo's text, its last token ending there?
 * MEMO_TEXT bytes from line can be read; those past the text do not count.
 */
HOT int memo_match(const struct line_memo *mo, const char *line)
{
#ifdef __SSE2__
	uint64_t eq = 0, want = ((uint64_t)1 << mo->len) - 1;

	for (int i = 0; i < MEMO_TEXT / 16; i++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(line + 16 * i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(mo->text + 16 * i));
		eq |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) << (16 * i);
	}
	return mo->len != 0 && (eq & want) == want && tok_end(line[mo->len]);
#else
	return mo->len != 0 && memcmp(line, mo->text, mo->len) == 0 && tok_end(line[mo->len]);
#endif
}

/*
 * Keeps the line start just parsed, [line, p) with p past the blank after
 * the width, and its fields; pre is the old tracers' block and warp prefix.
 */
HOT void remember_line(struct line_memo *mo, const mpxkit_simt_inst *in, const uint32_t *pre,
		       const char *line, const char *p)
{
	size_t len = (size_t)(p - line) - (p[-1] == ' ' || p[-1] == '\t');

	if (len == 0 || len >= MEMO_TEXT) { /* the byte after the text must be readable too */
		mo->len = 0;
		return;
	}
	mo->len = (uint8_t)len;
	memcpy(mo->text, line, len);
	mo->pc = in->pc;
	mo->mask = in->mask;
	mo->source_line = in->source_line;
	memcpy(mo->pre, pre, sizeof mo->pre);
	mo->n_dst = in->n_dst;
	mo->n_src = in->n_src;
	memcpy(mo->dst, in->dst, sizeof mo->dst);
	memcpy(mo->src, in->src, sizeof mo->src);
	mo->opcode = in->opcode;
	mo->mem_width = in->mem_width;
}

/* The old tracers' prefix names the block and warp being read: 0, or the message. */
static int check_prefix(mpxkit_simt_trace *t, const uint32_t *pre, mpxkit_diag *diag)
{
	if (pre[0] != t->block[0] || pre[1] != t->block[1] || pre[2] != t->block[2] ||
	    pre[3] != t->warp)
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "instruction of block %u,%u,%u warp %u inside block %u,%u,%u warp %u",
			     pre[0], pre[1], pre[2], pre[3], t->block[0], t->block[1], t->block[2],
			     t->warp);
	return 0;
}

/* The mask names only lanes the warp has: 0, or the message. */
HOT int check_mask(mpxkit_simt_trace *t, mpxkit_diag *diag)
{
	if (t->inst.mask & ~t->warp_lanes)
		return TFAIL(t, diag, MPXKIT_ERANGE,
			     "mask %08x names lanes beyond the block's %u threads (warp %u)",
			     t->inst.mask, t->k.threads_per_block, t->warp);
	return 0;
}

/* A line that starts with the memo's text: its fields, checked where they depend on the warp. */
HOT int take_memo(mpxkit_simt_trace *t, const struct line_memo *mo, mpxkit_diag *diag)
{
	mpxkit_simt_inst *in = &t->inst;
	int rc;

	if (t->k.tracer_version < 3 && (rc = check_prefix(t, mo->pre, diag)) < 0)
		return rc;
	in->source_line = mo->source_line;
	in->pc = mo->pc;
	in->mask = mo->mask;
	if ((rc = check_mask(t, diag)) < 0)
		return rc;
	in->n_dst = mo->n_dst;
	in->n_src = mo->n_src;
	memcpy(in->dst, mo->dst, sizeof in->dst);
	memcpy(in->src, mo->src, sizeof in->src);
	in->opcode = mo->opcode;
	in->mem_width = mo->mem_width;
	return 0;
}

/* The line start when no memo has it: prefix, line number, PC, mask, middle. */
static int parse_start(mpxkit_simt_trace *t, const char **pp, uint32_t *pre, mpxkit_diag *diag)
{
	mpxkit_simt_inst *in = &t->inst;
	uint64_t v;
	int rc;

	if (t->k.tracer_version < 3) {
		for (int i = 0; i < 4; i++) {
			if (tok_dec(pp, 0xffffffffu, &v) < 0)
				return TFAIL(
				    t, diag, MPXKIT_EFORMAT,
				    "instruction: 'TBX TBY TBZ WARP' prefix expected (tracer "
				    "version %u)",
				    t->k.tracer_version);
			pre[i] = (uint32_t)v;
		}
		if ((rc = check_prefix(t, pre, diag)) < 0)
			return rc;
	}
	in->source_line = 0;
	if (t->k.lineinfo) {
		if (tok_dec(pp, 0xffffffffu, &v) < 0)
			return TFAIL(t, diag, MPXKIT_EFORMAT,
				     "source line number expected (lineinfo is on)");
		in->source_line = (uint32_t)v;
	}
	if (tok_hex(pp, 16, 0, &in->pc) < 0)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "PC: 1 to 16 hex digits expected");
	if (tok_hex(pp, 8, 0, &v) < 0)
		return TFAIL(t, diag, MPXKIT_EFORMAT, "mask: 1 to 8 hex digits expected");
	in->mask = (uint32_t)v;
	if ((rc = check_mask(t, diag)) < 0)
		return rc;
	return parse_middle(t, pp, diag);
}

/*
 * One instruction line from line: it ends at a NUL (a line from next_line,
 * trimmed) or at an LF (a line read in place, see read_in_place), and nothing
 * after it is used; bytes up to end can be read (the memo's compare reads
 * ahead).  *eol is where it ends.
 */
static int parse_inst(mpxkit_simt_trace *t, const char *line, const char *end, mpxkit_diag *diag,
		      const char **eol)
{
	mpxkit_simt_inst *in = &t->inst;
	const char *p = line;
	struct line_memo *mo = NULL;
	uint32_t pre[4] = {0, 0, 0, 0};
	int64_t imm;
	int rc;

	if (end - line >= MEMO_TEXT) {
		mo = memo_slot(t, line);
		if (memo_match(mo, line)) {
			if ((rc = take_memo(t, mo, diag)) < 0)
				return rc;
			p = tok_past(line + mo->len);
			goto rest;
		}
	}
	if ((rc = parse_start(t, &p, pre, diag)) < 0)
		return rc;
	if (mo)
		remember_line(mo, in, pre, line, p);
rest:
	in->addr_mode = -1;
	if (in->mem_width != 0 && (rc = parse_addresses(t, &p, diag)) < 0)
		return rc;
	in->has_imm = 0;
	in->imm = 0;
	if (t->k.tracer_version >= 5) {
		if (tok_sdec(&p, 32, &imm) < 0)
			return TFAIL(
			    t, diag, MPXKIT_EFORMAT,
			    "immediate: a decimal 32-bit value expected (tracer version 5)");
		in->has_imm = 1;
		in->imm = (int32_t)imm;
	}
	p = tok_start(p);
	if (*p != '\0' && *p != '\n')
		return TFAIL(t, diag, MPXKIT_EFORMAT,
			     "unexpected field '%.*s' at the end of the instruction",
			     (int)(end - p > 32 ? 32 : end - p), p);
	*eol = p;
	return 0;
}

/*
 * The next instruction line parsed where it lies in the reader's window,
 * without finding its end first or copying it: 1 when it was one, parsed
 * and taken; 0 to leave the line to next_line (a line of another kind, a CR
 * or blanks where the fast path does not look for them, any error): that
 * path then gives it the same fields, or the same message at the same line.
 */
static int read_in_place(mpxkit_simt_trace *t)
{
	lines *l = &t->l;
	const char *eol;
	char c;

	if (l->wp == l->wend)
		return 0;
	c = *l->wp;
	if (c == '#' || c == 'w' || c == 't' || c == '\n' || c == '\r' || is_blank(c))
		return 0;
	if (parse_inst(t, l->wp, l->wend, NULL, &eol) < 0)
		return 0;
	l->wp = (char *)eol + 1;
	l->wlines++;
	l->lineno++;
	return 1;
}

int mpxkit_simt_trace_next(mpxkit_simt_trace *t, mpxkit_simt_step *step, mpxkit_diag *diag)
{
	const char *eol;
	char *line;
	size_t n;
	int rc;

	if (t == NULL || step == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "kernel trace: missing argument");
	for (;;) {
		if (t->state == S_DONE)
			return MPXKIT_SIMT_END;
		if (t->state == S_INSTS && read_in_place(t)) {
			if (--t->left == 0)
				t->state = S_IN_BLOCK;
			step->inst = &t->inst;
			return MPXKIT_SIMT_INST;
		}
		if ((rc = next_line(&t->l, &line, &n, diag)) < 0)
			return rc;
		if (rc == 0) {
			/* A trace cut between blocks would time a smaller kernel than its grid. */
			if (t->state == S_BETWEEN && t->blocks != t->k.n_blocks)
				return mpxkit_fail(
				    diag, MPXKIT_ETRUNC,
				    "%s: holds %llu of the grid's %llu thread blocks (grid dim = "
				    "(%u,%u,%u))",
				    t->l.name, (unsigned long long)t->blocks,
				    (unsigned long long)t->k.n_blocks, t->k.grid[0], t->k.grid[1],
				    t->k.grid[2]);
			if (t->state == S_BETWEEN) {
				t->state = S_DONE;
				return MPXKIT_SIMT_END;
			}
			if (t->state == S_INSTS)
				return mpxkit_fail(
				    diag, MPXKIT_ETRUNC,
				    "%s: ends inside warp %u: %llu of %llu instructions", t->l.name,
				    t->warp, (unsigned long long)(t->announced - t->left),
				    (unsigned long long)t->announced);
			return mpxkit_fail(diag, MPXKIT_ETRUNC,
					   "%s: ends inside a thread block (no '#END_TB')",
					   t->l.name);
		}
		while (n > 0 && is_blank(line[n - 1]))
			n--;
		if (n == 0)
			continue;
		line[n] = '\0';
		switch (t->state) {
		case S_BETWEEN:
			if (!is_word(line, n, "#BEGIN_TB"))
				return TFAIL(t, diag, MPXKIT_EFORMAT,
					     "'#BEGIN_TB' or the end of the file expected");
			t->state = S_BLOCK_HEAD;
			continue;
		case S_BLOCK_HEAD:
			if ((rc = parse_block_line(t, line, n, diag)) < 0)
				return rc;
			memcpy(step->block, t->block, sizeof t->block);
			t->state = S_IN_BLOCK;
			return MPXKIT_SIMT_BLOCK;
		case S_IN_BLOCK:
			if (is_word(line, n, "#END_TB")) {
				t->state = S_BETWEEN;
				return MPXKIT_SIMT_BLOCK_END;
			}
			if ((rc = parse_warp_lines(t, line, n, diag)) < 0)
				return rc;
			step->warp = t->warp;
			step->insts = t->announced;
			if (t->left > 0)
				t->state = S_INSTS;
			return MPXKIT_SIMT_WARP;
		case S_INSTS:
			if (line[0] == '#' || line[0] == 'w' || line[0] == 't')
				return TFAIL(t, diag, MPXKIT_EFORMAT,
					     "warp %u announced %llu instructions, %llu found",
					     t->warp, (unsigned long long)t->announced,
					     (unsigned long long)(t->announced - t->left));
			if ((rc = parse_inst(t, line, readable_end(&t->l), diag, &eol)) < 0)
				return rc;
			if (--t->left == 0)
				t->state = S_IN_BLOCK;
			step->inst = &t->inst;
			return MPXKIT_SIMT_INST;
		default:
			return MPXKIT_SIMT_END;
		}
	}
}
