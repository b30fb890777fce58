/* SPDX-License-Identifier: BSD-3-Clause */
/* Callgrind dumps written with --dump-instr=yes, read cost line by cost line with their jumps. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind_impl.h"
#include "grow.h"
#include "mpxkit/reader.h"
#include "mpxkit/record.h"
#include "u64map.h"

/* Bounds a corrupt file's name ids and dump size; callgrind's own stay far below. */
#define MAX_NAME_ID    (1u << 24)
#define MAX_DUMP_BYTES (UINT64_C(1) << 30)
#define MAX_POSITIONS  2

/* Name compression: each kind of name has its own ids ("fn=(12) main", later "fn=(12)"). */
typedef struct name_ids {
	uint32_t *index; /* id -> index + 1 into the dump's table; 0: undefined */
	size_t cap;
} name_ids;

/* What the next line must be after calls=, jump= or jcnd=. */
enum expect { EXPECT_ANY, EXPECT_CALL_COST, EXPECT_JUMP_SOURCE };

typedef struct parser {
	const char *name;
	size_t lineno;
	mpxkit_callgrind_instr *d;
	mpxkit_diag *diag;
	size_t n_pos; /* subpositions per cost line: 0 until positions: is read */
	int has_line; /* positions: holds "line" after "instr" */
	name_ids obj_ids, file_ids, fn_ids;
	size_t cap_objects, cap_files, cap_functions, cap_fn_names, cap_costs, cap_jumps;
	size_t cap_count_rows;
	char **fn_names; /* function names by name index (not yet paired with an object) */
	size_t n_fn_names;
	mpxkit__u64map fn_pairs;	  /* (name index, object) -> function index */
	long obj, file, fn_file, fn_name; /* current ob=, fi=/fe= file, fl= file, fn= (-1: none) */
	long jump_fn_name;		  /* jfn= for the next jump, -1 when none */
	uint64_t last[MAX_POSITIONS];	  /* the last cost line's subpositions */
	int have_last;
	enum expect expect;
	mpxkit_callgrind_jump pending; /* a jump waiting for its source line */
	uint64_t *sum;		       /* running sum of the cost lines, n_events */
} parser;

static int fail(parser *p, int code, const char *why)
{
	return mpxkit_fail(p->diag, code, "%s:%zu: %s", p->name, p->lineno, why);
}

static int oom(parser *p)
{
	return mpxkit_fail(p->diag, MPXKIT_ENOMEM, "%s: out of memory", p->name);
}

/* ---- names ----------------------------------------------------------------------------------- */

/* Appends a copy of s[0..len) to a table of strings; its index in *index. */
static int add_string(parser *p, char ***table, size_t *n, size_t *cap, const char *s, size_t len,
		      uint32_t *index)
{
	char *copy;

	if (mpxkit__reserve((void **)table, cap, *n + 1, sizeof **table) < 0 ||
	    (copy = strndup(s, len)) == NULL)
		return oom(p);
	(*table)[*n] = copy;
	*index = (uint32_t)(*n)++;
	return 0;
}

/*
 * A name spec's value: "(id) name" defines id, "(id)" uses it, "name" is a
 * name without id.  *index gets the name's index in table.
 */
static int resolve_name(parser *p, name_ids *ids, char ***table, size_t *n, size_t *cap,
			const char *v, uint32_t *index)
{
	uint64_t id = 0;
	const char *s = v, *name;
	size_t len;

	if (*s != '(') {
		len = strcspn(s, "\r\n");
		if (len == 0)
			return fail(p, MPXKIT_EFORMAT, "empty name");
		return add_string(p, table, n, cap, s, len, index);
	}
	s++;
	if (*s < '0' || *s > '9')
		return fail(p, MPXKIT_EFORMAT, "name id is not a number");
	for (; *s >= '0' && *s <= '9'; s++) {
		id = id * 10 + (uint64_t)(*s - '0');
		if (id >= MAX_NAME_ID)
			return fail(p, MPXKIT_EFORMAT, "name id too large");
	}
	if (*s != ')')
		return fail(p, MPXKIT_EFORMAT, "name id without ')'");
	name = s + 1 + strspn(s + 1, " \t");
	len = strcspn(name, "\r\n");
	if (len == 0) {
		if (id >= ids->cap || ids->index[id] == 0)
			return fail(p, MPXKIT_EFORMAT, "name id used before it is defined");
		*index = ids->index[id] - 1;
		return 0;
	}
	if (id >= ids->cap) {
		size_t want = ids->cap ? ids->cap : 64;
		while (want <= id)
			want *= 2;
		uint32_t *grown = realloc(ids->index, want * sizeof *grown);
		if (grown == NULL)
			return oom(p);
		memset(grown + ids->cap, 0, (want - ids->cap) * sizeof *grown);
		ids->index = grown;
		ids->cap = want;
	}
	if (ids->index[id] != 0)
		return fail(p, MPXKIT_EFORMAT, "name id defined twice");
	int rc = add_string(p, table, n, cap, name, len, index);
	if (rc == 0)
		ids->index[id] = *index + 1;
	return rc;
}

static int object_name(parser *p, const char *v, uint32_t *index)
{
	return resolve_name(p, &p->obj_ids, &p->d->objects, &p->d->n_objects, &p->cap_objects, v,
			    index);
}

static int file_name(parser *p, const char *v, uint32_t *index)
{
	return resolve_name(p, &p->file_ids, &p->d->files, &p->d->n_files, &p->cap_files, v, index);
}

static int function_name(parser *p, const char *v, uint32_t *index)
{
	return resolve_name(p, &p->fn_ids, &p->fn_names, &p->n_fn_names, &p->cap_fn_names, v,
			    index);
}

/* The function (name, current object) pair, added on first use. */
static int function_of(parser *p, long name, uint32_t *index)
{
	mpxkit_callgrind_instr *d = p->d;
	uint64_t key;
	uint32_t obj;

	if (p->obj < 0) {
		/* Cachegrind-style files name no object; give them one so every function has one.
		 */
		int rc = add_string(p, &d->objects, &d->n_objects, &p->cap_objects, "???", 3, &obj);
		if (rc < 0)
			return rc;
		p->obj = obj;
	}
	key = (uint64_t)name << 32 | (uint64_t)p->obj;
	if (mpxkit__u64map_find(&p->fn_pairs, key, index, NULL))
		return 0;
	if (mpxkit__reserve((void **)&d->functions, &p->cap_functions, d->n_functions + 1,
			    sizeof *d->functions) < 0)
		return oom(p);
	d->functions[d->n_functions].name = strdup(p->fn_names[name]);
	if (d->functions[d->n_functions].name == NULL)
		return oom(p);
	d->functions[d->n_functions].object = (uint32_t)p->obj;
	*index = (uint32_t)d->n_functions++;
	if (mpxkit__u64map_add(&p->fn_pairs, key, *index) < 0)
		return oom(p);
	return 0;
}

/* ob=, fl=, fi=, fe=, fn= and the call and jump targets' names; 1 when line is one. */
static int position_spec(parser *p, const char *line)
{
	static const char *const specs[] = {
	    "ob=", "fl=", "fi=", "fe=", "fn=", "cob=", "cfi=", "cfl=", "cfn=", "jfi=", "jfn="};
	size_t k, n = sizeof specs / sizeof specs[0];
	const char *v;
	uint32_t index;
	int rc;

	for (k = 0; k < n; k++)
		if (strncmp(line, specs[k], strlen(specs[k])) == 0)
			break;
	if (k == n)
		return 0;
	v = line + strlen(specs[k]);
	v += strspn(v, " \t");
	switch (k) {
	case 0: /* ob= */
		rc = object_name(p, v, &index);
		if (rc == 0)
			p->obj = index;
		break;
	case 1: /* fl= */
		rc = file_name(p, v, &index);
		if (rc == 0)
			p->fn_file = p->file = index;
		break;
	case 2: /* fi= */
	case 3: /* fe= */
		rc = file_name(p, v, &index);
		if (rc == 0)
			p->file = index;
		break;
	case 4: /* fn= */
		rc = function_name(p, v, &index);
		if (rc == 0) {
			p->fn_name = index;
			p->file = p->fn_file;
		}
		break;
	case 5: /* cob= */
		rc = object_name(p, v, &index);
		break;
	case 6: /* cfi= */
	case 7: /* cfl= */
	case 9: /* jfi= */
		rc = file_name(p, v, &index);
		break;
	case 8: /* cfn= */
		rc = function_name(p, v, &index);
		break;
	default: /* jfn= */
		rc = function_name(p, v, &index);
		if (rc == 0)
			p->jump_fn_name = index;
	}
	return rc < 0 ? rc : 1;
}

/* ---- numbers and positions ------------------------------------------------------------------- */

/* A decimal or 0x-hex number at *s, moved past it; -1 when there is none or it overflows. */
static int number(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		const char *start = p += 2;
		for (;; p++) {
			unsigned digit;
			if (*p >= '0' && *p <= '9')
				digit = (unsigned)(*p - '0');
			else if (*p >= 'a' && *p <= 'f')
				digit = (unsigned)(*p - 'a' + 10);
			else if (*p >= 'A' && *p <= 'F')
				digit = (unsigned)(*p - 'A' + 10);
			else
				break;
			if (v >> 60)
				return -1;
			v = v << 4 | digit;
		}
		if (p == start)
			return -1;
	} else {
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			unsigned digit = (unsigned)(*p - '0');
			if (v > (UINT64_MAX - digit) / 10)
				return -1;
			v = v * 10 + digit;
		}
	}
	*s = p;
	*out = v;
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The end of a token: a blank or the end of the line. */
static int token_ends(const char *s)
{
	return *s == '\0' || is_space(*s);
}

/*
 * The subpositions at *s, relative to p->last (never moved here): absolute,
 * "+N", "-N" or "*".
 */
static int positions(parser *p, const char **s, uint64_t *pos)
{
	const char *q = *s;

	for (size_t i = 0; i < p->n_pos; i++) {
		uint64_t v;
		int relative = *(q + strspn(q, " \t")) == '*' || *(q + strspn(q, " \t")) == '+' ||
			       *(q + strspn(q, " \t")) == '-';

		q += strspn(q, " \t");
		if (relative && !p->have_last)
			return fail(p, MPXKIT_EFORMAT, "relative position before any absolute one");
		if (*q == '*') {
			q++;
			v = p->last[i];
		} else if (*q == '+' || *q == '-') {
			int minus = *q == '-';
			q++;
			if (number(&q, &v) < 0)
				return fail(p, MPXKIT_EFORMAT, "bad relative position");
			if (minus ? v > p->last[i] : v > UINT64_MAX - p->last[i])
				return fail(p, MPXKIT_EFORMAT, "relative position out of range");
			v = minus ? p->last[i] - v : p->last[i] + v;
		} else if (number(&q, &v) < 0) {
			return fail(p, MPXKIT_EFORMAT, "position is not a number");
		}
		if (!token_ends(q))
			return fail(p, MPXKIT_EFORMAT, "position is not a number");
		pos[i] = v;
	}
	if (p->n_pos > 1 && pos[1] > UINT32_MAX)
		return fail(p, MPXKIT_EFORMAT, "line number above 2^32-1");
	*s = q;
	return 0;
}

/* The counts after the positions; missing trailing ones are 0. */
static int costs(parser *p, const char *s, uint64_t *out)
{
	size_t n = 0, n_events = p->d->head.n_events;

	memset(out, 0, n_events * sizeof *out);
	for (;;) {
		s += strspn(s, " \t\r");
		if (*s == '\0')
			break;
		if (n == n_events)
			return fail(p, MPXKIT_EFORMAT, "cost line has more counts than events");
		if (number(&s, &out[n]) < 0 || !token_ends(s))
			return fail(p, MPXKIT_EFORMAT, "count is not a number or above 2^64-1");
		n++;
	}
	return 0;
}

/* ---- body lines ------------------------------------------------------------------------------ */

static int need_header(parser *p)
{
	if (p->d->head.events == NULL)
		return fail(p, MPXKIT_EFORMAT, "cost before the events: line");
	if (p->n_pos == 0)
		return fail(
		    p, MPXKIT_EFORMAT,
		    "cost before a positions: line naming instr (not a --dump-instr=yes dump)");
	return 0;
}

/* A regular cost line: the self cost of one instruction. */
static int cost_line(parser *p, const char *s)
{
	mpxkit_callgrind_instr *d = p->d;
	size_t n_events = d->head.n_events;
	uint64_t pos[MAX_POSITIONS] = {0, 0}, *row;
	uint32_t fn;
	int rc;

	if ((rc = need_header(p)) < 0 || (rc = positions(p, &s, pos)) < 0)
		return rc;
	if (p->fn_name < 0)
		return fail(p, MPXKIT_EFORMAT, "cost line before any fn=");
	if ((rc = function_of(p, p->fn_name, &fn)) < 0)
		return rc;
	if (mpxkit__reserve((void **)&d->costs, &p->cap_costs, d->n_costs + 1, sizeof *d->costs) <
	    0)
		return oom(p);
	if (p->cap_count_rows < p->cap_costs) {
		uint64_t *grown = realloc(d->counts, p->cap_costs * n_events * sizeof *grown);
		if (grown == NULL)
			return oom(p);
		d->counts = grown;
		p->cap_count_rows = p->cap_costs;
	}
	row = d->counts + d->n_costs * n_events;
	if ((rc = costs(p, s, row)) < 0)
		return rc;
	for (size_t e = 0; e < n_events; e++) {
		if (row[e] > UINT64_MAX - p->sum[e])
			return fail(p, MPXKIT_ERANGE, "costs sum beyond 2^64-1");
		p->sum[e] += row[e];
	}
	d->costs[d->n_costs].function = fn;
	d->costs[d->n_costs].file = p->file < 0 ? 0 : (uint32_t)p->file;
	d->costs[d->n_costs].line = p->n_pos > 1 ? (uint32_t)pos[1] : 0;
	d->costs[d->n_costs].address = pos[0];
	if (p->file < 0) {
		uint32_t unknown;
		/* A cost without fl=: file "???", as callgrind names unknown files. */
		rc = add_string(p, &d->files, &d->n_files, &p->cap_files, "???", 3, &unknown);
		if (rc < 0)
			return rc;
		p->file = p->fn_file = unknown;
		d->costs[d->n_costs].file = unknown;
	}
	d->n_costs++;
	memcpy(p->last, pos, sizeof pos);
	p->have_last = 1;
	return 0;
}

/* jump=COUNT TARGET or jcnd=FOLLOWED/EXECUTED TARGET (jcnd=EXECUTED FOLLOWED TARGET, as
 * documented). */
static int jump_line(parser *p, const char *s, int conditional)
{
	mpxkit_callgrind_jump *j = &p->pending;
	uint64_t pos[MAX_POSITIONS], a, b = 0;
	int rc;

	if ((rc = need_header(p)) < 0)
		return rc;
	if (p->fn_name < 0)
		return fail(p, MPXKIT_EFORMAT, "jump before any fn=");
	s += strspn(s, " \t");
	if (number(&s, &a) < 0)
		return fail(p, MPXKIT_EFORMAT, "jump count is not a number");
	if (conditional) {
		if (*s == '/') {
			s++;
			if (number(&s, &b) < 0)
				return fail(p, MPXKIT_EFORMAT,
					    "jcnd= execution count is not a number");
		} else {
			uint64_t followed;
			s += strspn(s, " \t");
			if (number(&s, &followed) < 0)
				return fail(p, MPXKIT_EFORMAT, "jcnd= jump count is not a number");
			b = a;
			a = followed;
		}
		if (a > b)
			return fail(p, MPXKIT_EFORMAT, "jcnd= jumps more often than it runs");
	} else {
		b = a;
	}
	if (!is_space(*s))
		return fail(p, MPXKIT_EFORMAT, "jump without a target");
	if ((rc = positions(p, &s, pos)) < 0)
		return rc;
	if (s[strspn(s, " \t\r")] != '\0')
		return fail(p, MPXKIT_EFORMAT, "text after a jump's target");
	memset(j, 0, sizeof *j);
	j->count = a;
	j->executed = b;
	j->conditional = conditional;
	j->to = pos[0];
	if ((rc = function_of(p, p->fn_name, &j->function)) < 0)
		return rc;
	j->to_function = j->function;
	if (p->jump_fn_name >= 0 && (rc = function_of(p, p->jump_fn_name, &j->to_function)) < 0)
		return rc;
	p->jump_fn_name = -1;
	p->expect = EXPECT_JUMP_SOURCE;
	return 0;
}

/* The line after a jump: the jump instruction's position, no cost. */
static int jump_source(parser *p, const char *s)
{
	mpxkit_callgrind_instr *d = p->d;
	uint64_t pos[MAX_POSITIONS];
	int rc;

	p->expect = EXPECT_ANY;
	if ((rc = positions(p, &s, pos)) < 0)
		return rc;
	if (s[strspn(s, " \t\r")] != '\0')
		return fail(p, MPXKIT_EFORMAT, "cost on a jump's source line");
	if (p->pending.count == 0)
		return 0; /* a jump never taken carries no trajectory */
	if (mpxkit__reserve((void **)&d->jumps, &p->cap_jumps, d->n_jumps + 1, sizeof *d->jumps) <
	    0)
		return oom(p);
	p->pending.from = pos[0];
	d->jumps[d->n_jumps++] = p->pending;
	return 0;
}

/* calls=COUNT TARGET: only checked; the next line's inclusive cost is no instruction's own. */
static int calls_line(parser *p, const char *s)
{
	uint64_t count, pos[MAX_POSITIONS];
	int rc;

	if ((rc = need_header(p)) < 0)
		return rc;
	s += strspn(s, " \t");
	if (number(&s, &count) < 0 || !is_space(*s))
		return fail(p, MPXKIT_EFORMAT, "calls= count is not a number");
	if ((rc = positions(p, &s, pos)) < 0)
		return rc;
	if (s[strspn(s, " \t\r")] != '\0')
		return fail(p, MPXKIT_EFORMAT, "text after a call's target");
	p->expect = EXPECT_CALL_COST;
	return 0;
}

static int call_cost(parser *p, const char *s)
{
	uint64_t pos[MAX_POSITIONS];
	uint64_t *scratch = p->sum + p->d->head.n_events;
	int rc;

	p->expect = EXPECT_ANY;
	if ((rc = positions(p, &s, pos)) < 0)
		return rc;
	return costs(p, s, scratch);
}

/* positions: instr [line] (any other order or subposition is not a per-instruction dump). */
static int positions_header(parser *p, const char *v)
{
	char words[3][8];
	int n = sscanf(v, "%7s %7s %7s", words[0], words[1], words[2]);

	if (p->n_pos != 0)
		return fail(p, MPXKIT_EFORMAT, "second positions: line");
	if (n >= 1 && strcmp(words[0], "instr") == 0) {
		if (n == 1)
			return p->n_pos = 1, 0;
		if (n == 2 && strcmp(words[1], "line") == 0)
			return p->n_pos = 2, p->has_line = 1, 0;
	}
	return fail(p, MPXKIT_EFORMAT,
		    "positions: is not 'instr line' (not a --dump-instr=yes dump)");
}

static int thread_header(parser *p, const char *v)
{
	uint64_t t;

	if (number(&v, &t) < 0 || !mpxkit__cg_is_blank(v) || t == 0 || t > 1000000)
		return fail(p, MPXKIT_EFORMAT, "bad thread: number");
	p->d->thread = (unsigned)t;
	return 0;
}

static int body_or_header(parser *p, char *line)
{
	const char *v;
	int rc;

	if (p->expect == EXPECT_CALL_COST)
		return call_cost(p, line);
	if (p->expect == EXPECT_JUMP_SOURCE)
		return jump_source(p, line);
	if (line[0] == '#' || mpxkit__cg_is_blank(line))
		return 0;
	if ((rc = position_spec(p, line)) != 0)
		return rc < 0 ? rc : 0;
	if (strncmp(line, "calls=", 6) == 0)
		return calls_line(p, line + 6);
	if (strncmp(line, "jump=", 5) == 0)
		return jump_line(p, line + 5, 0);
	if (strncmp(line, "jcnd=", 5) == 0)
		return jump_line(p, line + 5, 1);
	if ((line[0] >= '0' && line[0] <= '9') || line[0] == '+' || line[0] == '-' ||
	    line[0] == '*')
		return cost_line(p, line);
	if ((v = mpxkit__cg_header_value(line, "positions")) != NULL)
		return positions_header(p, v);
	if ((v = mpxkit__cg_header_value(line, "thread")) != NULL)
		return thread_header(p, v);
	rc = mpxkit__cg_header(p->name, p->lineno, line, &p->d->head, p->diag);
	if (rc < 0)
		return rc;
	if (rc == 1 && p->d->head.events != NULL && p->sum == NULL) {
		/* Two rows: the running sum, and scratch for call costs. */
		p->sum = calloc(2 * p->d->head.n_events, sizeof *p->sum);
		if (p->sum == NULL)
			return oom(p);
	}
	if (rc == 1 || strchr(line, ':') != NULL)
		return 0; /* a header line, known or not (pid:, cmd:, summary:, event:) */
	return fail(p, MPXKIT_EFORMAT, "not a callgrind line");
}

static int check_end(parser *p)
{
	mpxkit_callgrind_instr *d = p->d;

	if (p->expect != EXPECT_ANY)
		return fail(p, MPXKIT_EFORMAT, "file ends after a calls= or jump line");
	if (d->head.events == NULL)
		return fail(p, MPXKIT_EFORMAT, "no events: line");
	if (d->head.totals == NULL)
		return fail(p, MPXKIT_EFORMAT, "no totals: line at the end (file truncated?)");
	for (size_t e = 0; e < d->head.n_events; e++)
		if (p->sum[e] != d->head.totals[e])
			return mpxkit_fail(
			    p->diag, MPXKIT_EFORMAT,
			    "%s: the cost lines sum to %" PRIu64 " %s, totals: says %" PRIu64,
			    p->name, p->sum[e], d->head.events[e], d->head.totals[e]);
	return 0;
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

void mpxkit_callgrind_instr_free(mpxkit_callgrind_instr *d)
{
	if (d == NULL)
		return;
	free_strings(d->head.events, d->head.n_events);
	free(d->head.totals);
	free(d->head.creator);
	free_strings(d->objects, d->n_objects);
	free_strings(d->files, d->n_files);
	for (size_t i = 0; i < d->n_functions; i++)
		free(d->functions[i].name);
	free(d->functions);
	free(d->costs);
	free(d->counts);
	free(d->jumps);
	free(d);
}

static void parser_free(parser *p)
{
	free(p->obj_ids.index);
	free(p->file_ids.index);
	free(p->fn_ids.index);
	free_strings(p->fn_names, p->n_fn_names);
	mpxkit__u64map_free(&p->fn_pairs);
	free(p->sum);
}

/* Lines are split in place, so the buffer is a private copy. */
static int parse_lines(parser *p, char *buf, size_t len)
{
	mpxkit_diag *diag = p->diag;
	size_t pos = 0;

	while (pos < len) {
		char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		int rc;

		p->lineno++;
		if (memchr(line, '\0', n) != NULL)
			return fail(p, MPXKIT_EFORMAT, "NUL byte in a text file");
		if (nl == NULL)
			return fail(p, MPXKIT_EFORMAT,
				    "last line has no newline (file truncated?)");
		*nl = '\0';
		pos += n + 1;
		if (p->d->head.totals != NULL) {
			if (mpxkit__cg_is_blank(line))
				continue;
			return fail(p, MPXKIT_EFORMAT, "text after the totals: line");
		}
		rc = body_or_header(p, line);
		if (rc < 0)
			return rc;
	}
	if (p->lineno == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:1: empty file", p->name);
	return check_end(p);
}

int mpxkit_callgrind_instr_parse(const char *name, const char *buf, size_t len,
				 mpxkit_callgrind_instr **out, mpxkit_diag *diag)
{
	parser p;
	mpxkit_diag local;
	char *copy = NULL;
	int rc;

	if (out == NULL || (buf == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "callgrind: missing argument");
	memset(&p, 0, sizeof p);
	p.name = name ? name : "<callgrind>";
	p.diag = diag;
	p.obj = p.file = p.fn_file = p.fn_name = p.jump_fn_name = -1;
	/* The helpers always fill a diag; the caller's may be NULL. */
	if (p.diag == NULL)
		p.diag = &local;
	p.d = calloc(1, sizeof *p.d);
	copy = malloc(len + 1);
	if (p.d == NULL || copy == NULL) {
		rc = mpxkit_fail(p.diag, MPXKIT_ENOMEM, "%s: out of memory", p.name);
		goto done;
	}
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';
	rc = parse_lines(&p, copy, len);
done:
	free(copy);
	parser_free(&p);
	if (rc < 0) {
		mpxkit_callgrind_instr_free(p.d);
		return rc;
	}
	*out = p.d;
	return 0;
}

int mpxkit_callgrind_instr_read(const char *path, mpxkit_callgrind_instr **out, mpxkit_diag *diag)
{
	const mpxkit_reader_options opt = {MPXKIT_READER_TEXT, MAX_DUMP_BYTES, 0, "callgrind dump"};
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "callgrind: missing argument");
	rc = mpxkit_read_file(path, &opt, &buf, &len, diag);
	if (rc == 0)
		rc = mpxkit_callgrind_instr_parse(path, buf, len, out, diag);
	free(buf);
	return rc;
}
