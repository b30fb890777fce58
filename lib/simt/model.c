/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIMT timing model: thread simulators in warps, barriers, the block scheduler, SM bounds. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "simt_impl.h"

/* What a warp waited for before an instruction (doc/simt.md, "Thread simulators and warps"). */
enum cause { WAIT_MEMORY, WAIT_ALU, WAIT_FETCH, WAIT_SYNC, WAIT_PIPE, N_WAITS };
enum producer { PROD_NONE, PROD_ALU, PROD_MEMORY };
enum issue_kind { ISSUE_ALU, ISSUE_MEMORY, ISSUE_NOP, N_ISSUE };

struct mpxkit_simt_sim {
	const mpxkit_simt_gpu *gpu;
	simt_memsys mem;
	uint64_t base;	  /* absolute time at which the next kernel starts */
	uint32_t kernels; /* kernels run so far */
};

/* One SM's sums over a kernel. */
typedef struct sm_state {
	int used;
	uint64_t end; /* latency bound: the end of its last block */
	uint64_t warps, insts;
	double l1_wave, smem_wave;
	double wait[N_WAITS];
	double *issue;	   /* [schedulers][N_ISSUE] */
	double *unit_busy; /* [schedulers][n_units] */
} sm_state;

/* The thread simulators of one warp, in lock step. */
typedef struct warp_state {
	int active;
	uint32_t sched;
	uint64_t t;	   /* earliest issue of the next instruction, block-local time */
	uint64_t mem_done; /* last store acknowledgement */
	uint64_t seg_start;
	size_t seg; /* barrier interval */
	uint64_t iline, iline_ready;
	int have_iline, have_ctrl;
	uint64_t ctrl_pc;
	double issue[N_ISSUE];
	double wait[N_WAITS];
	double l1_wave, smem_wave;
	uint64_t ready[256];
	uint8_t producer[256];
	uint64_t unit_free[MPXKIT_SIMT_MAX_UNITS];
	double unit_busy[MPXKIT_SIMT_MAX_UNITS];
} warp_state;

typedef struct slot {
	uint64_t free;
	uint64_t index;
} slot;

typedef struct pc_table {
	mpxkit_simt_pc_stats *e;
	size_t n, cap;
	uint32_t *hash; /* index + 1; 0 empty */
	size_t hash_cap;
	uint32_t recent[256]; /* index + 1 of a recent entry per PC hash: checked first */
} pc_table;

/* One kernel's run. */
typedef struct run {
	mpxkit_simt_sim *sim;
	const mpxkit_simt_gpu *gpu;
	mpxkit_simt_trace *trace;
	const mpxkit_simt_kernel *k;
	mpxkit_simt_result *res;
	mpxkit_diag *diag;
	simt_opinfo *ops;
	size_t n_ops;
	uint32_t occupancy;
	uint64_t n_slots, next_unused;
	slot *heap;
	size_t heap_n, heap_cap;
	sm_state *sms;
	/* the current block */
	int in_block;
	uint32_t sm;
	uint64_t start, slot_index, abs0;
	uint64_t *seg_max; /* per barrier interval: the slowest warp's duration */
	uint64_t *bar_max, *bar_sum, *bar_cnt; /* over the warps that ended it at the barrier */
	size_t n_seg, seg_cap;
	uint32_t ishift;
	warp_state w;
	pc_table pcs;
} run;

static int fail_at(run *R, int code, const char *msg)
{
	return mpxkit_fail(R->diag, code, "%s:%llu: %s", mpxkit_simt_trace_name(R->trace),
			   (unsigned long long)mpxkit_simt_trace_line(R->trace), msg);
}

static int oom(run *R)
{
	return mpxkit_fail(R->diag, MPXKIT_ENOMEM, "%s: out of memory",
			   mpxkit_simt_trace_name(R->trace));
}

/* ---- the simulated GPU ---------------------------------------------------------------------- */

int mpxkit_simt_sim_new(const mpxkit_simt_gpu *gpu, mpxkit_simt_sim **out, mpxkit_diag *diag)
{
	mpxkit_simt_sim *s;

	if (gpu == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "simt: missing argument");
	s = calloc(1, sizeof *s);
	if (s == NULL || mpxkit__simt_mem_init(&s->mem, gpu) < 0) {
		free(s);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "simt: out of memory for the caches of %s",
				   gpu->name);
	}
	s->gpu = gpu;
	*out = s;
	return 0;
}

void mpxkit_simt_sim_free(mpxkit_simt_sim *s)
{
	if (s == NULL)
		return;
	mpxkit__simt_mem_free(&s->mem);
	free(s);
}

int mpxkit_simt_sim_memcpy(mpxkit_simt_sim *s, uint64_t addr, uint64_t size, mpxkit_diag *diag)
{
	if (s == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "simt: missing argument");
	mpxkit__simt_mem_copy(&s->mem, addr, size, s->base);
	return 0;
}

/* ---- opcodes -------------------------------------------------------------------------------- */

/* Does the opcode text carry the modifier (".CG" in "LDG.E.CG")? */
static int has_modifier(const char *opcode, const char *mod)
{
	size_t n = strlen(mod);

	for (const char *p = strchr(opcode, '.'); p; p = strchr(p + 1, '.'))
		if (strncmp(p + 1, mod, n) == 0 && (p[1 + n] == '.' || p[1 + n] == '\0'))
			return 1;
	return 0;
}

static int resolve(run *R, uint32_t id, simt_opinfo **out)
{
	const char *text = mpxkit_simt_trace_opcode(R->trace, id);
	const mpxkit_simt_op *op;
	simt_opinfo *o;
	size_t base;

	if (id >= R->n_ops) {
		size_t n = R->n_ops ? R->n_ops : 64;
		simt_opinfo *g;
		while (n <= id)
			n *= 2;
		g = realloc(R->ops, n * sizeof *g);
		if (g == NULL)
			return oom(R);
		memset(g + R->n_ops, 0, (n - R->n_ops) * sizeof *g);
		R->ops = g;
		R->n_ops = n;
	}
	o = &R->ops[id];
	op = mpxkit_simt_gpu_op(R->gpu, text);
	if (op == NULL) {
		base = mpxkit__simt_base_len(text);
		return fail_at(
		    R, MPXKIT_ENOENT,
		    mpxkit__simt_fmt("opcode '%s' is not in the GPU description '%s' (add a line "
				     "'op %.*s UNIT CLASS')",
				     text, R->gpu->name, (int)base, text));
	}
	o->unit = op->unit;
	o->cls = op->cls;
	o->kind = op->kind;
	o->space = op->space;
	o->latency = R->gpu->units[op->unit].latency;
	o->initiation = R->gpu->units[op->unit].initiation;
	o->control = op->cls == MPXKIT_SIMT_CONTROL;
	o->barrier = op->kind == MPXKIT_SIMT_KIND_BARRIER && !has_modifier(text, "ARV");
	o->fence = strncmp(text, "MEMBAR", 6) == 0 && mpxkit__simt_base_len(text) == 6;
	if (has_modifier(text, "CG") || has_modifier(text, "CV"))
		o->l1 = SIMT_L1_BYPASS;
	else if (has_modifier(text, "CA") || has_modifier(text, "CI") || has_modifier(text, "NC") ||
		 has_modifier(text, "LU") || has_modifier(text, "CONSTANT"))
		o->l1 = SIMT_L1_CACHE;
	else
		o->l1 = SIMT_L1_DEFAULT;
	o->resolved = 1;
	*out = o;
	return 0;
}

/* ---- per-PC statistics ---------------------------------------------------------------------- */

static mpxkit_simt_pc_stats *pc_entry(run *R, uint64_t pc, uint32_t opcode)
{
	pc_table *T = &R->pcs;
	size_t i, mask;

	if (T->hash_cap == 0 || (T->n + 1) * 2 > T->hash_cap) {
		size_t ncap = T->hash_cap ? T->hash_cap * 2 : 1024;
		uint32_t *nh = calloc(ncap, sizeof *nh);
		if (nh == NULL)
			return NULL;
		for (size_t e = 0; e < T->n; e++) {
			size_t j =
			    (size_t)((T->e[e].pc * 0x9E3779B97F4A7C15ull) >> 32) & (ncap - 1);
			while (nh[j])
				j = (j + 1) & (ncap - 1);
			nh[j] = (uint32_t)e + 1;
		}
		free(T->hash);
		T->hash = nh;
		T->hash_cap = ncap;
	}
	mask = T->hash_cap - 1;
	for (i = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 32) & mask; T->hash[i];
	     i = (i + 1) & mask)
		if (T->e[T->hash[i] - 1].pc == pc)
			return &T->e[T->hash[i] - 1];
	if (T->n == T->cap) {
		size_t ncap = T->cap ? T->cap * 2 : 256;
		mpxkit_simt_pc_stats *g;
		if (ncap > UINT32_MAX - 1)
			return NULL;
		g = realloc(T->e, ncap * sizeof *g);
		if (g == NULL)
			return NULL;
		T->e = g;
		T->cap = ncap;
	}
	memset(&T->e[T->n], 0, sizeof T->e[T->n]);
	T->e[T->n].pc = pc;
	T->e[T->n].opcode = opcode;
	T->hash[i] = (uint32_t)T->n + 1;
	return &T->e[T->n++];
}

/* pc_entry, trying first the entry last found for a PC of the same hash (loops repeat PCs). */
static inline mpxkit_simt_pc_stats *pc_find(run *R, uint64_t pc, uint32_t opcode)
{
	pc_table *T = &R->pcs;
	uint32_t *r = &T->recent[(pc * 0x9E3779B97F4A7C15ull) >> 56];
	mpxkit_simt_pc_stats *e;

	if (*r && T->e[*r - 1].pc == pc)
		return &T->e[*r - 1];
	if ((e = pc_entry(R, pc, opcode)) != NULL)
		*r = (uint32_t)(e - T->e) + 1;
	return e;
}

/* ---- blocks and the block scheduler --------------------------------------------------------- */

/* Resident blocks per SM (doc/simt.md); 0 with a reason when the block cannot run at all. */
static uint32_t occupancy(const mpxkit_simt_gpu *g, const mpxkit_simt_kernel *k, const char **why)
{
	uint64_t warps = k->warps_per_block, occ = g->max_blocks, v;
	uint64_t regs_warp =
	    ((uint64_t)k->nregs * 32 + g->register_unit - 1) / g->register_unit * g->register_unit;
	uint64_t shmem =
	    ((uint64_t)k->shmem + g->shared_unit - 1) / g->shared_unit * g->shared_unit;

	*why = NULL;
	if (k->threads_per_block > g->max_threads_per_block) {
		*why = "more threads per block than the GPU allows";
		return 0;
	}
	if (k->shmem > g->shared_per_block) {
		*why = "more shared memory per block than the GPU allows";
		return 0;
	}
	if ((v = g->max_warps / warps) < occ)
		occ = v;
	if (regs_warp > 0 && (v = g->registers / (regs_warp * warps)) < occ)
		occ = v;
	if (shmem > 0 && (v = g->shared_per_sm / shmem) < occ)
		occ = v;
	if (occ == 0)
		*why = "a block needs more warps, registers or shared memory than an SM has";
	return (uint32_t)occ;
}

static int heap_less(const slot *a, const slot *b)
{
	return a->free < b->free || (a->free == b->free && a->index < b->index);
}

static int heap_push(run *R, slot s)
{
	size_t i;

	if (R->heap_n == R->heap_cap) {
		size_t ncap = R->heap_cap ? R->heap_cap * 2 : 64;
		slot *g = realloc(R->heap, ncap * sizeof *g);
		if (g == NULL)
			return -1;
		R->heap = g;
		R->heap_cap = ncap;
	}
	i = R->heap_n++;
	while (i > 0 && heap_less(&s, &R->heap[(i - 1) / 2])) {
		R->heap[i] = R->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	R->heap[i] = s;
	return 0;
}

static slot heap_pop(run *R)
{
	slot top = R->heap[0], last = R->heap[--R->heap_n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= R->heap_n)
			break;
		if (c + 1 < R->heap_n && heap_less(&R->heap[c + 1], &R->heap[c]))
			c++;
		if (!heap_less(&R->heap[c], &last))
			break;
		R->heap[i] = R->heap[c];
		i = c;
	}
	if (R->heap_n > 0)
		R->heap[i] = last;
	return top;
}

static sm_state *sm_use(run *R, uint32_t sm)
{
	sm_state *s = &R->sms[sm];
	size_t n = R->gpu->schedulers;

	if (!s->used) {
		s->issue = calloc(n * N_ISSUE, sizeof *s->issue);
		s->unit_busy = calloc(n * R->gpu->n_units, sizeof *s->unit_busy);
		if (s->issue == NULL || s->unit_busy == NULL ||
		    mpxkit__simt_mem_sm(&R->sim->mem, sm) < 0)
			return NULL;
		s->used = 1;
	}
	return s;
}

/* A block begins: the earliest-free slot of the list schedule takes it. */
static int block_begin(run *R)
{
	slot s;

	if (R->next_unused < R->n_slots) {
		s.index = R->next_unused++;
		s.free = 0;
	} else {
		s = heap_pop(R);
	}
	R->slot_index = s.index;
	R->start = s.free;
	R->sm = (uint32_t)(s.index % R->gpu->sms);
	R->abs0 = R->sim->base + R->start;
	R->n_seg = 0;
	R->in_block = 1;
	if (sm_use(R, R->sm) == NULL)
		return oom(R);
	return 0;
}

/* Grows the barrier-interval arrays to hold interval k; 0 or -1. */
static int seg_reserve(run *R, size_t k)
{
	uint64_t **arr[4] = {&R->seg_max, &R->bar_max, &R->bar_sum, &R->bar_cnt};
	size_t ncap;

	if (k < R->seg_cap)
		goto zero;
	ncap = R->seg_cap ? R->seg_cap * 2 : 16;
	while (ncap <= k)
		ncap *= 2;
	for (int i = 0; i < 4; i++) {
		uint64_t *g = realloc(*arr[i], ncap * sizeof *g);
		if (g == NULL)
			return -1;
		*arr[i] = g;
	}
	R->seg_cap = ncap;
zero:
	while (R->n_seg <= k) {
		R->seg_max[R->n_seg] = R->bar_max[R->n_seg] = 0;
		R->bar_sum[R->n_seg] = R->bar_cnt[R->n_seg] = 0;
		R->n_seg++;
	}
	return 0;
}

/*
 * Warp w's interval k lasted d: the block's interval k lasts as long as its
 * slowest warp.  At a barrier (not at the warp's end) the wait of the faster
 * warps is a synchronisation stall.
 */
static int segment(run *R, size_t k, uint64_t d, int barrier)
{
	if (seg_reserve(R, k) < 0)
		return -1;
	if (d > R->seg_max[k])
		R->seg_max[k] = d;
	if (barrier) {
		if (d > R->bar_max[k])
			R->bar_max[k] = d;
		R->bar_sum[k] += d;
		R->bar_cnt[k]++;
	}
	return 0;
}

static int warp_end(run *R)
{
	warp_state *w = &R->w;
	sm_state *s = &R->sms[R->sm];
	uint64_t end = w->t > w->mem_done ? w->t : w->mem_done;
	size_t nu = R->gpu->n_units;

	if (!w->active)
		return 0;
	w->active = 0;
	if (segment(R, w->seg, end - w->seg_start, 0) < 0)
		return oom(R);
	for (int i = 0; i < N_ISSUE; i++)
		s->issue[w->sched * N_ISSUE + i] += w->issue[i];
	for (size_t u = 0; u < nu; u++)
		s->unit_busy[w->sched * nu + u] += w->unit_busy[u];
	for (int c = 0; c < N_WAITS; c++)
		s->wait[c] += w->wait[c];
	s->l1_wave += w->l1_wave;
	s->smem_wave += w->smem_wave;
	return 0;
}

static void warp_begin(run *R)
{
	warp_state *w = &R->w;
	sm_state *s = &R->sms[R->sm];
	size_t nu = R->gpu->n_units;

	w->active = 1;
	w->sched = (uint32_t)(s->warps++ % R->gpu->schedulers);
	w->t = w->mem_done = w->seg_start = 0;
	w->seg = 0;
	w->have_iline = w->have_ctrl = 0;
	memset(w->issue, 0, sizeof w->issue);
	memset(w->wait, 0, sizeof w->wait);
	w->l1_wave = w->smem_wave = 0;
	memset(w->ready, 0, sizeof w->ready);
	memset(w->producer, 0, sizeof w->producer);
	memset(w->unit_free, 0, nu * sizeof w->unit_free[0]);
	memset(w->unit_busy, 0, nu * sizeof w->unit_busy[0]);
}

static int block_end(run *R)
{
	sm_state *s = &R->sms[R->sm];
	uint64_t t = 0;
	double sync = 0;
	slot sl;

	if (warp_end(R) < 0)
		return -1;
	for (size_t k = 0; k < R->n_seg; k++) {
		t += R->seg_max[k];
		sync += (double)R->bar_cnt[k] * (double)R->bar_max[k] - (double)R->bar_sum[k];
	}
	s->wait[WAIT_SYNC] += sync;
	if (R->start + t > s->end)
		s->end = R->start + t;
	sl.free = R->start + t;
	sl.index = R->slot_index;
	R->in_block = 0;
	if (heap_push(R, sl) < 0)
		return oom(R);
	return 0;
}

/* ---- one warp instruction ------------------------------------------------------------------- */

static void count(run *R, const simt_opinfo *op, const mpxkit_simt_inst *in, uint32_t lanes)
{
	mpxkit_simt_result *r = R->res;

	r->warp_insts++;
	r->thread_insts += lanes;
	r->warp_class[op->cls]++;
	r->thread_class[op->cls] += lanes;
	if (op->kind >= MPXKIT_SIMT_KIND_LOAD && op->kind <= MPXKIT_SIMT_KIND_ATOMIC) {
		int space = op->space;
		if (space == MPXKIT_SIMT_GENERIC) {
			/* counted where the first active lane's address lies */
			uint64_t a =
			    in->mask && in->mem_width ? in->addr[__builtin_ctz(in->mask)] : 0;
			const simt_memsys *m = &R->sim->mem;
			if (in->mask && in->mem_width && a >= m->shmem_base &&
			    a - m->shmem_base < (16ull << 20))
				space = MPXKIT_SIMT_SHARED;
			else if (in->mask && in->mem_width && a >= m->local_base &&
				 a - m->local_base < (16ull << 20))
				space = MPXKIT_SIMT_LOCAL;
			else
				space = MPXKIT_SIMT_GLOBAL;
		}
		if (op->kind == MPXKIT_SIMT_KIND_LOAD)
			(*(space == MPXKIT_SIMT_SHARED	? &r->inst_shared_loads
			   : space == MPXKIT_SIMT_LOCAL ? &r->inst_local_loads
							: &r->inst_global_loads))++;
		else if (op->kind == MPXKIT_SIMT_KIND_STORE)
			(*(space == MPXKIT_SIMT_SHARED	? &r->inst_shared_stores
			   : space == MPXKIT_SIMT_LOCAL ? &r->inst_local_stores
							: &r->inst_global_stores))++;
		else
			(*(space == MPXKIT_SIMT_SHARED ? &r->inst_shared_atomics
						       : &r->inst_global_atomics))++;
	}
}

static int inst_step(run *R, const mpxkit_simt_inst *in)
{
	warp_state *w = &R->w;
	simt_opinfo *op = in->opcode < R->n_ops ? &R->ops[in->opcode] : NULL;
	/* most instructions run on every lane */
	uint32_t lanes = in->mask == 0xffffffffu ? 32 : mpxkit__simt_popcount(in->mask);
	uint32_t nop_lanes = 32 - lanes;
	uint64_t t = w->t, issue = t, c;
	int cause = -1, rc;
	simt_memresult mr = {0, 0, 0, 0};
	mpxkit_simt_pc_stats *pe;

	if (op == NULL || !op->resolved)
		if ((rc = resolve(R, in->opcode, &op)) < 0)
			return rc;
	/* the instruction fetch */
	if (R->sim->mem.icache) {
		uint64_t il = in->pc >> R->ishift;
		if (!w->have_iline || il != w->iline) {
			uint64_t ready =
			    mpxkit__simt_mem_fetch(&R->sim->mem, R->sm, in->pc, R->abs0 + t);
			w->iline = il;
			w->have_iline = 1;
			w->iline_ready = ready - R->abs0;
		}
		if (w->iline_ready > issue)
			issue = w->iline_ready, cause = WAIT_FETCH;
	}
	if (in->mask != 0) {
		/*
		 * the scoreboard: sources and destinations must be ready (RZ,
		 * register 255, is never written, so its ready time stays 0)
		 */
		for (unsigned i = 0; i < in->n_src; i++)
			if ((c = w->ready[in->src[i]]) > issue)
				issue = c, cause = w->producer[in->src[i]] == PROD_MEMORY
						       ? WAIT_MEMORY
						       : WAIT_ALU;
		for (unsigned i = 0; i < in->n_dst; i++)
			if ((c = w->ready[in->dst[i]]) > issue)
				issue = c, cause = w->producer[in->dst[i]] == PROD_MEMORY
						       ? WAIT_MEMORY
						       : WAIT_ALU;
		if (op->fence && w->mem_done > issue)
			issue = w->mem_done, cause = WAIT_MEMORY;
		if ((c = w->unit_free[op->unit]) > issue)
			issue = c, cause = WAIT_PIPE;
	}
	if (issue > t)
		w->wait[cause] += (double)(issue - t);
	if (in->mask == 0) {
		w->issue[ISSUE_NOP]++; /* every lane masked: one NOP issue slot, nothing else */
	} else if (op->kind >= MPXKIT_SIMT_KIND_LOAD && op->kind <= MPXKIT_SIMT_KIND_ATOMIC &&
		   in->mem_width > 0) {
		uint64_t busy;
		mpxkit__simt_mem_access(&R->sim->mem, R->sm, op, in, R->abs0 + issue, &mr);
		if (op->kind != MPXKIT_SIMT_KIND_STORE)
			for (unsigned i = 0; i < in->n_dst; i++)
				if (in->dst[i] != 255) {
					w->ready[in->dst[i]] = issue + mr.latency;
					w->producer[in->dst[i]] = PROD_MEMORY;
				}
		if (op->kind != MPXKIT_SIMT_KIND_LOAD && issue + mr.latency > w->mem_done)
			w->mem_done = issue + mr.latency;
		busy = mr.wavefronts > op->initiation ? mr.wavefronts : op->initiation;
		w->unit_free[op->unit] = issue + busy;
		w->unit_busy[op->unit] += op->initiation;
		*(mr.shared ? &w->smem_wave : &w->l1_wave) += mr.wavefronts;
		w->issue[ISSUE_MEMORY]++;
	} else {
		for (unsigned i = 0; i < in->n_dst; i++)
			if (in->dst[i] != 255) {
				w->ready[in->dst[i]] = issue + op->latency;
				w->producer[in->dst[i]] = PROD_ALU;
			}
		w->unit_free[op->unit] = issue + op->initiation;
		w->unit_busy[op->unit] += op->initiation;
		w->issue[op->kind >= MPXKIT_SIMT_KIND_LOAD && op->kind <= MPXKIT_SIMT_KIND_ATOMIC
			     ? ISSUE_MEMORY
			     : ISSUE_ALU]++;
		if (op->barrier) {
			/* the warp's barrier interval ends at its arrival; the block takes the
			 * slowest */
			if (segment(R, w->seg, issue - w->seg_start, 1) < 0)
				return oom(R);
			w->seg++;
			w->seg_start = issue;
		}
	}
	count(R, op, in, lanes);
	if (op->control) {
		w->have_ctrl = 1;
		w->ctrl_pc = in->pc;
	}
	pe = pc_find(R, in->pc, in->opcode);
	if (pe == NULL)
		return oom(R);
	pe->warp_insts++;
	pe->thread_insts += lanes; /* its masked lanes follow at the end (finish) */
	pe->stall_cycles += issue - t;
	pe->transactions += mr.transactions;
	if (nop_lanes) {
		if (!w->have_ctrl)
			R->res->entry_diverged_slots += nop_lanes;
		else if (w->ctrl_pc == in->pc)
			pe->diverged_slots += nop_lanes;
		else if ((pe = pc_find(R, w->ctrl_pc, 0)) != NULL)
			pe->diverged_slots += nop_lanes;
		else
			return oom(R);
	}
	if (lanes == 0)
		R->res->all_masked_insts++;
	w->t = issue + 1;
	return 0;
}

/* ---- the kernel's time ---------------------------------------------------------------------- */

/* An SM's time: the largest of its bounds (doc/simt.md, "Combining warps into time"). */
static double sm_time(const run *R, const sm_state *s, int *bound, uint32_t *crit_sched)
{
	const mpxkit_simt_gpu *g = R->gpu;
	size_t nu = g->n_units;
	double t = (double)s->end, most = -1;

	*bound = MPXKIT_SIMT_BOUND_LATENCY;
	*crit_sched = 0;
	for (uint32_t q = 0; q < g->schedulers; q++) {
		const double *is = &s->issue[q * N_ISSUE];
		double issue = is[ISSUE_ALU] + is[ISSUE_MEMORY] + is[ISSUE_NOP];
		if (issue > most)
			most = issue, *crit_sched = q;
		if (issue > t)
			t = issue, *bound = MPXKIT_SIMT_BOUND_ISSUE;
		for (size_t u = 0; u < nu; u++)
			if (s->unit_busy[q * nu + u] > t)
				t = s->unit_busy[q * nu + u], *bound = MPXKIT_SIMT_BOUND_UNIT;
	}
	if (s->l1_wave > t)
		t = s->l1_wave, *bound = MPXKIT_SIMT_BOUND_L1;
	if (s->smem_wave > t)
		t = s->smem_wave, *bound = MPXKIT_SIMT_BOUND_SHARED;
	return t;
}

static void breakdown(run *R, const sm_state *s, uint32_t q, int sm_bound, double sm_t)
{
	mpxkit_simt_result *r = R->res;
	const double *is = &s->issue[q * N_ISSUE];
	double rest, waits = 0, extra = r->active_cycles - sm_t;
	static const int part_of[N_WAITS] = {
	    [WAIT_MEMORY] = MPXKIT_SIMT_PART_STALL_MEMORY,
	    [WAIT_ALU] = MPXKIT_SIMT_PART_STALL_ALU,
	    [WAIT_FETCH] = MPXKIT_SIMT_PART_STALL_FETCH,
	    [WAIT_SYNC] = MPXKIT_SIMT_PART_STALL_SYNC,
	    [WAIT_PIPE] = MPXKIT_SIMT_PART_STALL_PIPE,
	};

	r->parts[MPXKIT_SIMT_PART_ALU] = is[ISSUE_ALU];
	r->parts[MPXKIT_SIMT_PART_MEMORY] = is[ISSUE_MEMORY];
	r->parts[MPXKIT_SIMT_PART_NOP] = is[ISSUE_NOP];
	r->parts[MPXKIT_SIMT_PART_LAUNCH] = R->gpu->launch_cycles;
	/* the part of the time set by the L2 or DRAM bandwidth, beyond the SM's own bounds */
	r->parts[MPXKIT_SIMT_PART_STALL_MEMORY] = extra;
	rest = sm_t - (is[ISSUE_ALU] + is[ISSUE_MEMORY] + is[ISSUE_NOP]);
	for (int c = 0; c < N_WAITS; c++)
		waits += s->wait[c];
	if (rest <= 0)
		return;
	if (waits > 0) {
		for (int c = 0; c < N_WAITS; c++)
			r->parts[part_of[c]] += rest * s->wait[c] / waits;
	} else {
		int p =
		    sm_bound == MPXKIT_SIMT_BOUND_UNIT ? MPXKIT_SIMT_PART_STALL_PIPE
		    : sm_bound == MPXKIT_SIMT_BOUND_LATENCY || sm_bound == MPXKIT_SIMT_BOUND_ISSUE
			? MPXKIT_SIMT_PART_STALL_ALU
			: MPXKIT_SIMT_PART_STALL_MEMORY;
		r->parts[p] += rest;
	}
}

static int finish(run *R)
{
	const mpxkit_simt_gpu *g = R->gpu;
	mpxkit_simt_result *r = R->res;
	const simt_memcounters *mc = &R->sim->mem.c;
	double active = 0, crit_t = -1, sum_t = 0, l2_t, dram_t;
	int crit = -1, crit_bound = 0;
	uint32_t crit_q = 0;
	uint64_t sum_insts = 0;

	for (uint32_t i = 0; i < g->sms; i++) {
		const sm_state *s = &R->sms[i];
		int bound;
		uint32_t q;
		double t;
		if (!s->used)
			continue;
		t = sm_time(R, s, &bound, &q);
		r->sms_active++;
		sum_t += t;
		if (t > crit_t)
			crit_t = t, crit = (int)i, crit_bound = bound, crit_q = q;
	}
	for (uint32_t i = 0; i < g->sms; i++)
		sum_insts += R->sms[i].insts;
	active = crit_t > 0 ? crit_t : 0;
	r->bound = crit_bound;
	l2_t = (double)(mc->l2_read + mc->l2_write) * 32 / g->l2_bytes_per_cycle;
	dram_t = (double)(mc->dram_read + mc->dram_write) * 32 / g->dram_bytes_per_cycle;
	if (l2_t > active)
		active = l2_t, r->bound = MPXKIT_SIMT_BOUND_L2;
	if (dram_t > active)
		active = dram_t, r->bound = MPXKIT_SIMT_BOUND_DRAM;
	r->active_cycles = active;
	r->cycles = active + g->launch_cycles;
	if (crit >= 0)
		breakdown(R, &R->sms[crit], crit_q, crit_bound, crit_t);
	/* every warp instruction has 32 lane slots: those not executed were masked */
	r->nop_lane_slots = 32 * r->warp_insts - r->thread_insts;
	for (size_t i = 0; i < R->pcs.n; i++)
		R->pcs.e[i].nop_lane_slots = 32 * R->pcs.e[i].warp_insts - R->pcs.e[i].thread_insts;
	r->ipc = active > 0 ? (double)r->warp_insts / active : 0;
	r->thread_ipc = active > 0 ? (double)r->thread_insts / active : 0;
	r->sm_ipc = sum_t > 0 ? (double)sum_insts / sum_t : 0;
	r->gld_transactions = mc->gld_tx;
	r->gst_transactions = mc->gst_tx;
	r->local_load_transactions = mc->lld_tx;
	r->local_store_transactions = mc->lst_tx;
	r->shared_load_transactions = mc->sld_tx;
	r->shared_store_transactions = mc->sst_tx;
	r->l2_read_transactions = mc->l2_read;
	r->l2_write_transactions = mc->l2_write;
	r->dram_read_transactions = mc->dram_read;
	r->dram_write_transactions = mc->dram_write;
	r->l1_hits = mc->l1_hits;
	r->l1_misses = mc->l1_misses;
	r->l2_hits = mc->l2_hits;
	r->l2_misses = mc->l2_misses;
	r->gld_l1_hits = mc->gld_l1_hits;
	r->gld_l1_sectors = mc->gld_l1_sectors;
	r->icache_misses = mc->icache_misses;
	return 0;
}

static int cmp_pc(const void *a, const void *b)
{
	const mpxkit_simt_pc_stats *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void run_free(run *R)
{
	for (uint32_t i = 0; R->sms && i < R->gpu->sms; i++) {
		free(R->sms[i].issue);
		free(R->sms[i].unit_busy);
	}
	free(R->sms);
	free(R->ops);
	free(R->heap);
	free(R->seg_max);
	free(R->bar_max);
	free(R->bar_sum);
	free(R->bar_cnt);
	free(R->pcs.e);
	free(R->pcs.hash);
}

static int run_setup(run *R)
{
	const mpxkit_simt_kernel *k = R->k;
	const char *why;

	R->occupancy = occupancy(R->gpu, k, &why);
	if (R->occupancy == 0)
		return mpxkit_fail(R->diag, MPXKIT_ERANGE,
				   "%s: kernel %s (block %ux%ux%u, %u registers, %u bytes of "
				   "shared memory) cannot run on %s: %s",
				   mpxkit_simt_trace_name(R->trace), k->name, k->block[0],
				   k->block[1], k->block[2], k->nregs, k->shmem, R->gpu->name, why);
	R->n_slots = (uint64_t)R->gpu->sms * R->occupancy;
	R->sms = calloc(R->gpu->sms, sizeof *R->sms);
	R->res = calloc(1, sizeof *R->res);
	if (R->sms == NULL || R->res == NULL || (R->res->kernel = strdup(k->name)) == NULL)
		return oom(R);
	R->res->id = k->id;
	memcpy(R->res->grid, k->grid, sizeof k->grid);
	memcpy(R->res->block, k->block, sizeof k->block);
	R->res->occupancy = R->occupancy;
	R->ishift = R->gpu->icache.sets ? (uint32_t)__builtin_ctz(R->gpu->icache.line) : 0;
	return mpxkit__simt_mem_kernel(&R->sim->mem, k, R->sim->kernels);
}

int mpxkit_simt_sim_kernel(mpxkit_simt_sim *sim, mpxkit_simt_trace *trace, mpxkit_simt_result **out,
			   mpxkit_diag *diag)
{
	run R;
	mpxkit_simt_step step;
	int ev, rc;

	if (sim == NULL || trace == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "simt: missing argument");
	memset(&R, 0, sizeof R);
	R.sim = sim;
	R.gpu = sim->gpu;
	R.trace = trace;
	R.k = mpxkit_simt_trace_kernel(trace);
	R.diag = diag;
	if ((rc = run_setup(&R)) < 0)
		goto fail;
	while ((ev = mpxkit_simt_trace_next(trace, &step, diag)) != MPXKIT_SIMT_END) {
		switch (ev) {
		case MPXKIT_SIMT_BLOCK:
			rc = block_begin(&R);
			break;
		case MPXKIT_SIMT_WARP:
			if ((rc = warp_end(&R)) == 0)
				warp_begin(&R);
			break;
		case MPXKIT_SIMT_INST:
			R.sms[R.sm].insts++;
			rc = inst_step(&R, step.inst);
			break;
		case MPXKIT_SIMT_BLOCK_END:
			rc = block_end(&R);
			break;
		default:
			rc = ev; /* a negative code from the reader, with its diag */
		}
		if (rc < 0)
			goto fail;
	}
	finish(&R);
	if (R.pcs.n > 0)
		qsort(R.pcs.e, R.pcs.n, sizeof *R.pcs.e, cmp_pc);
	R.res->pcs = R.pcs.e;
	R.res->n_pcs = R.pcs.n;
	R.pcs.e = NULL;
	sim->base += (uint64_t)R.res->cycles + 1;
	sim->kernels++;
	*out = R.res;
	R.res = NULL;
	run_free(&R);
	return 0;
fail:
	mpxkit_simt_result_free(R.res);
	run_free(&R);
	return rc;
}
