/* SPDX-License-Identifier: BSD-3-Clause */
/* A perf_event mmap page read in user space: rdpmc under the kernel's sequence lock. */
#include <string.h>

#include "perf_page.h"

#if defined(__x86_64__) || defined(__i386__)
static uint64_t x86_rdpmc(void *arg, uint32_t counter)
{
	uint32_t lo, hi;

	(void)arg;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t x86_rdtsc(void *arg)
{
	uint32_t lo, hi;

	(void)arg;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static const mpxkit__pmc native = {x86_rdpmc, x86_rdtsc, NULL};

const mpxkit__pmc *mpxkit__pmc_native(void)
{
	return &native;
}
#else
/* arm64 and others read their counters differently; their events take read(2). */
const mpxkit__pmc *mpxkit__pmc_native(void)
{
	return NULL;
}
#endif

/* The page is written by the kernel under us: every field is loaded where the protocol says. */
typedef const volatile struct perf_event_mmap_page page_t;

/* time_offset + cyc x time_mult >> time_shift, without the 128-bit product the kernel avoids. */
static uint64_t time_delta(uint64_t cyc, uint32_t mult, uint16_t shift, uint64_t offset)
{
	uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);

	return offset + quot * mult + ((rem * mult) >> shift);
}

/* The counter's low `width` bits as a signed number: the kernel counts up from a negative start. */
static uint64_t sign_extend(uint64_t pmc, uint16_t width)
{
	int64_t v = (int64_t)(pmc << (64 - width));

	return (uint64_t)(v >> (64 - width));
}

int mpxkit__perf_page_read(const struct perf_event_mmap_page *page, const mpxkit__pmc *pmc,
			   int want_time, mpxkit__page_reading *out)
{
	page_t *pc = page;

	for (unsigned tries = 1; tries <= MPXKIT__PAGE_TRIES; tries++) {
		uint64_t enabled, running, cyc = 0, time_offset = 0, cycles = 0,
					   mask = ~(uint64_t)0;
		uint64_t count, counter = 0;
		uint32_t seq, index, mult = 0;
		uint16_t width = 0, shift = 0;
		struct perf_event_mmap_page
		    caps; /* the capability bits, loaded once, decoded here */
		int timed, rdpmc;

		seq = __atomic_load_n(&page->lock, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue; /* the kernel is writing it (on another CPU: we were migrated) */
		enabled = pc->time_enabled;
		running = pc->time_running;
		caps.capabilities = pc->capabilities;
		timed = want_time && caps.cap_user_time && pc->time_shift < 64;
		if (timed) {
			cyc = pmc->rdtsc(pmc->arg);
			mult = pc->time_mult;
			shift = pc->time_shift;
			time_offset = pc->time_offset;
			if (caps.cap_user_time_short) {
				cycles = pc->time_cycles;
				mask = pc->time_mask;
			}
		}
		index = pc->index;
		count = (uint64_t)pc->offset;
		/* cap_user_rdpmc is only meaningful where bit 0 is marked deprecated (Linux
		 * >= 3.12). */
		rdpmc = caps.cap_bit0_is_deprecated && caps.cap_user_rdpmc && index != 0;
		if (rdpmc) {
			width = pc->pmc_width;
			if (width == 0 || width > 64)
				return MPXKIT__PAGE_OFF;
			counter = pmc->rdpmc(pmc->arg, index - 1);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&page->lock, __ATOMIC_RELAXED) != seq)
			continue;
		if (!rdpmc)
			return MPXKIT__PAGE_OFF;
		out->value = count + sign_extend(counter, width);
		if (timed) {
			uint64_t delta;
			if (caps.cap_user_time_short)
				cyc = cycles + ((cyc - cycles) & mask);
			delta = time_delta(cyc, mult, shift, time_offset);
			enabled += delta;
			running += delta; /* on a counter (index != 0): running too */
		}
		out->time_enabled = enabled;
		out->time_running = running;
		out->timed = timed;
		out->tries = tries;
		return MPXKIT__PAGE_COUNTER;
	}
	return MPXKIT__PAGE_BUSY;
}

/* ---- a simulated counter (tests, benches) ------------------------------------------------ */

static uint64_t sim_rdpmc(void *arg, uint32_t counter)
{
	(void)counter;
	return ((const mpxkit__sim_counter *)arg)->counter;
}

static uint64_t sim_rdtsc(void *arg)
{
	return ((const mpxkit__sim_counter *)arg)->tsc;
}

void mpxkit__sim_counter_init(mpxkit__sim_counter *s, uint32_t index, int64_t offset,
			      uint64_t counter, uint64_t enabled)
{
	memset(s, 0, sizeof *s);
	s->page.lock = 2;
	s->page.index = index;
	s->page.offset = offset;
	s->page.cap_bit0_is_deprecated = 1;
	s->page.cap_user_rdpmc = 1;
	s->page.cap_user_time = 1;
	s->page.pmc_width = 48;
	s->page.time_mult = 1;
	s->page.time_enabled = enabled;
	s->page.time_running = enabled;
	s->counter = counter;
	s->pmc = (mpxkit__pmc){sim_rdpmc, sim_rdtsc, s};
}
