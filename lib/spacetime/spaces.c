/* SPDX-License-Identifier: BSD-3-Clause */
/* Code spaces: each block's functions cut into loop spans along backward jumps, instances merged by
 * overlap. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spacetime_impl.h"

#define NONE UINT32_MAX

/* A row's place in its function, for grouping and the address sweep. */
typedef struct key {
	uint32_t function;
	uint64_t address;
	uint32_t row;
} key;

/* A trajectory's span [lo, hi] in a function. */
typedef struct span {
	uint32_t function;
	uint64_t lo, hi;
	uint32_t rows; /* rows assigned to it */
	uint32_t space;
	int dead; /* merged into another while nesting */
} span;

void st_spaces_init(st_spaces *t, double overlap)
{
	memset(t, 0, sizeof *t);
	t->overlap = overlap;
}

void st_spaces_free(st_spaces *t)
{
	free(t->v);
	free(t->fn_head);
	free(t->fn_tail);
	free(t->keys);
	free(t->spans);
	free(t->inst);
	free(t->stack);
	memset(t, 0, sizeof *t);
}

static int cmp_key(const void *a, const void *b)
{
	const key *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* Outer spans first: by start, then the longer first. */
static int cmp_span(const void *a, const void *b)
{
	const span *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

/* ---- merging into spaces --------------------------------------------------------------------- */

static double overlap(uint64_t lo1, uint64_t hi1, uint64_t lo2, uint64_t hi2)
{
	uint64_t lo = lo1 > lo2 ? lo1 : lo2, hi = hi1 < hi2 ? hi1 : hi2;
	double len1 = (double)(hi1 - lo1) + 1, len2 = (double)(hi2 - lo2) + 1;

	if (lo > hi)
		return 0;
	return ((double)(hi - lo) + 1) / (len1 > len2 ? len1 : len2);
}

/* The space an instance of `function` over [lo, hi] joins, founded when none overlaps enough. */
static int join(st_spaces *t, uint32_t function, uint64_t lo, uint64_t hi, int loop, uint32_t *id)
{
	uint32_t best = NONE;
	double best_overlap = 0;

	if (function >= t->n_fn) {
		size_t old = t->n_fn, want = t->n_fn ? t->n_fn : 256;
		while (want <= function)
			want *= 2;
		uint32_t *h = realloc(t->fn_head, want * sizeof *h);
		if (h == NULL)
			return -MPXKIT_ENOMEM;
		t->fn_head = h;
		uint32_t *tl = realloc(t->fn_tail, want * sizeof *tl);
		if (tl == NULL)
			return -MPXKIT_ENOMEM;
		t->fn_tail = tl;
		for (size_t i = old; i < want; i++)
			t->fn_head[i] = t->fn_tail[i] = NONE;
		t->n_fn = want;
	}
	for (uint32_t s = t->fn_head[function]; s != NONE; s = t->v[s].next) {
		double o = overlap(lo, hi, t->v[s].lo, t->v[s].hi);
		/* The same loop header: the same loop, whichever side paths ran this time. */
		if (loop && t->v[s].loop && t->v[s].lo == lo) {
			*id = s;
			return 0;
		}
		if (o > best_overlap) { /* strictly: ties stay with the older space */
			best_overlap = o;
			best = s;
		}
	}
	if (best != NONE && best_overlap >= t->overlap) {
		*id = best;
		return 0;
	}
	if (t->n >= NONE - 1 ||
	    mpxkit__reserve((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v) < 0)
		return -MPXKIT_ENOMEM;
	t->v[t->n] = (st_space){function, lo, hi, loop, NONE};
	if (t->fn_tail[function] == NONE)
		t->fn_head[function] = (uint32_t)t->n;
	else
		t->v[t->fn_tail[function]].next = (uint32_t)t->n;
	t->fn_tail[function] = (uint32_t)t->n;
	*id = (uint32_t)t->n++;
	return 0;
}

/* ---- one function's spans -------------------------------------------------------------------- */

/*
 * Makes spans[0..*n) a nest: partial overlaps become their union, equal
 * spans one, so any two are disjoint or nested; sorted outer first.
 */
static void nest(span *s, size_t *n)
{
	for (;;) {
		size_t k = 0;
		int changed = 0;

		if (*n > 1)
			qsort(s, *n, sizeof *s, cmp_span);
		for (size_t i = 0; i < *n; i++)
			if (k == 0 || s[k - 1].lo != s[i].lo || s[k - 1].hi != s[i].hi)
				s[k++] = s[i];
		*n = k;
		for (size_t i = 0; i < *n; i++)
			s[i].dead = 0;
		for (size_t i = 0; i < *n; i++) {
			if (s[i].dead)
				continue;
			/* Every span starting inside s[i] and ending beyond it overlaps it
			 * partially. */
			for (size_t j = i + 1; j < *n && s[j].lo <= s[i].hi; j++)
				if (!s[j].dead && s[j].hi > s[i].hi) {
					s[i].hi = s[j].hi;
					s[j].dead = 1;
					changed = 1;
				}
		}
		if (!changed)
			return;
		k = 0;
		for (size_t i = 0; i < *n; i++)
			if (!s[i].dead)
				s[k++] = s[i];
		*n = k;
	}
}

/*
 * Assigns the rows keys[0..n) of one function (sorted by address) to the
 * innermost span holding them, or to the body; founds or joins a space per
 * instance, in order of range, and writes each row's space.
 */
static int one_function(st_spaces *t, const mpxkit_profile_function *f, const key *k, size_t n,
			span *s, size_t n_spans, int use_symbol_range, uint32_t *out)
{
	size_t top = 0, next = 0, body_rows = 0;
	uint64_t body_lo = UINT64_MAX, body_hi = 0;
	uint32_t body_space = NONE;
	int rc;

	if (mpxkit__reserve((void **)&t->stack, &t->cap_stack, n_spans + 1, sizeof *t->stack) < 0)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < n_spans; i++)
		s[i].rows = 0;
	/* Sweep: the stack holds the spans open at the address, innermost on top. */
	for (size_t i = 0; i < n; i++) {
		uint64_t a = k[i].address;
		while (top > 0 && s[t->stack[top - 1]].hi < a)
			top--;
		while (next < n_spans && s[next].lo <= a) {
			if (s[next].hi >= a) {
				while (top > 0 && s[t->stack[top - 1]].hi < s[next].lo)
					top--;
				t->stack[top++] = (uint32_t)next;
			}
			next++;
		}
		if (top > 0) {
			s[t->stack[top - 1]].rows++;
			out[k[i].row] = t->stack[top - 1]; /* a span index for now */
		} else {
			body_rows++;
			body_lo = a < body_lo ? a : body_lo;
			body_hi = a > body_hi ? a : body_hi;
			out[k[i].row] = NONE;
		}
	}
	if (use_symbol_range && f->size > 0) {
		body_lo = f->lo;
		body_hi = f->lo + f->size - 1;
	}
	/* Instances in order of range: spans are sorted by start, the body takes its place. */
	int body_done = body_rows == 0;
	for (size_t i = 0; i <= n_spans; i++) {
		if (!body_done && (i == n_spans || body_lo < s[i].lo ||
				   (body_lo == s[i].lo && body_hi >= s[i].hi))) {
			if ((rc = join(t, k[0].function, body_lo, body_hi, 0, &body_space)) < 0)
				return rc;
			body_done = 1;
		}
		if (i < n_spans && s[i].rows > 0 &&
		    (rc = join(t, k[0].function, s[i].lo, s[i].hi, 1, &s[i].space)) < 0)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t *o = &out[k[i].row];
		*o = *o == NONE ? body_space : s[*o].space;
	}
	return 0;
}

int st_spaces_assign(st_spaces *t, const mpxkit_profile *p, const mpxkit_profile_block *b,
		     int use_jumps, uint32_t *out)
{
	key *k;
	span *s;
	size_t n_spans = 0, si = 0;

	/* One more than needed: the scratch exists even for a block without rows or jumps. */
	if (mpxkit__reserve(&t->keys, &t->cap_keys, b->n_rows + 1, sizeof(key)) < 0 ||
	    mpxkit__reserve(&t->spans, &t->cap_spans, (use_jumps ? b->n_jumps : 0) + 1,
			    sizeof(span)) < 0)
		return -MPXKIT_ENOMEM;
	k = t->keys;
	s = t->spans;
	for (size_t i = 0; i < b->n_rows; i++) {
		const mpxkit_profile_code *c = mpxkit_profile_code_at(p, b->codes[i]);
		k[i] = (key){c->function, c->address, (uint32_t)i};
	}
	if (b->n_rows > 1)
		qsort(k, b->n_rows, sizeof *k, cmp_key);
	for (size_t i = 0; use_jumps && i < b->n_jumps; i++) {
		const mpxkit_profile_code *from = mpxkit_profile_code_at(p, b->jumps[i].from);
		const mpxkit_profile_code *to = mpxkit_profile_code_at(p, b->jumps[i].to);
		/* A backward jump inside one function: a loop's back edge. */
		if (from->function == to->function && to->address <= from->address)
			s[n_spans++] =
			    (span){from->function, to->address, from->address, 0, NONE, 0};
	}
	if (n_spans > 1)
		qsort(s, n_spans, sizeof *s, cmp_span);
	for (size_t i = 0; i < b->n_rows;) {
		uint32_t fn = k[i].function;
		size_t j = i, s0, ns;
		int rc;

		while (j < b->n_rows && k[j].function == fn)
			j++;
		while (si < n_spans && s[si].function < fn)
			si++;
		s0 = si;
		while (si < n_spans && s[si].function == fn)
			si++;
		ns = si - s0;
		nest(s + s0, &ns);
		rc = one_function(t, mpxkit_profile_function_at(p, fn), k + i, j - i, s + s0, ns,
				  !use_jumps, out);
		if (rc < 0)
			return rc;
		i = j;
	}
	return 0;
}
