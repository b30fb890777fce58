/* SPDX-License-Identifier: BSD-3-Clause */
/* The rdpmc reader (lib/source/perf_page.c) on simulated mmap pages: width, time scaling, retries.
 */
#include <stdint.h>
#include <string.h>

#include "cutest.h"
#include "../lib/source/perf_page.h"

/*
 * A simulated page and the instructions the reader calls.  The page is
 * what the kernel writes (include/uapi/linux/perf_event.h); the counter and
 * the time stamp are what rdpmc and rdtsc would return.  A write, when
 * armed, happens inside the reader's rdpmc, as an interrupt or a migration
 * would rewrite the page between the reader's two looks at the lock.
 */
typedef struct sim {
	struct perf_event_mmap_page page;
	uint64_t counter, tsc;
	uint32_t last_counter; /* the counter number the reader asked for */
	unsigned rdpmc_calls, rdtsc_calls;
	unsigned writes_left;  /* rdpmc calls that rewrite the page */
	uint64_t next_counter; /* the counter after such a write */
	int64_t next_offset;
} sim;

static uint64_t sim_rdpmc(void *arg, uint32_t counter)
{
	sim *s = arg;
	uint64_t v = s->counter;

	s->rdpmc_calls++;
	s->last_counter = counter;
	if (s->writes_left > 0) {
		s->writes_left--;
		s->page.lock += 2; /* the kernel's ++lock ... ++lock */
		s->page.offset = s->next_offset;
		s->counter = s->next_counter;
	}
	return v;
}

static uint64_t sim_rdtsc(void *arg)
{
	sim *s = arg;

	s->rdtsc_calls++;
	return s->tsc;
}

/* A page as Linux writes it for an event on counter 3 (index 4) of a 48-bit PMU. */
static void sim_init(sim *s)
{
	memset(s, 0, sizeof *s);
	s->page.version = 0;
	s->page.lock = 10;
	s->page.index = 4;
	s->page.cap_bit0_is_deprecated = 1;
	s->page.cap_user_rdpmc = 1;
	s->page.pmc_width = 48;
	s->page.time_enabled = 5000000;
	s->page.time_running = 4000000;
}

static mpxkit__pmc sim_pmc(sim *s)
{
	return (mpxkit__pmc){sim_rdpmc, sim_rdtsc, s};
}

/*
 * The kernel starts a counter at -left (x86_perf_event_set_period: prev_count
 * = -left, the counter = -left masked to the width) and publishes offset =
 * count - prev_count.  So after `ran` more events the count is count + ran,
 * whatever the width and whatever rdpmc returns above it.
 */
static void set_counter(sim *s, uint64_t count, uint64_t left, uint64_t ran, uint16_t width,
			uint64_t garbage_above)
{
	uint64_t mask = width == 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
	uint64_t prev = (uint64_t)0 - left;

	s->page.pmc_width = width;
	s->page.offset = (int64_t)(count - prev);
	s->counter = ((prev + ran) & mask) | (width == 64 ? 0 : garbage_above << width);
}

static void test_width(void)
{
	static const uint16_t widths[] = {32, 40, 48, 64};
	sim s;
	mpxkit__pmc pmc = sim_pmc(&s);
	mpxkit__page_reading r;

	for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
		/* Below, at and past the counter's wrap to zero (left = 100: it wraps after 100).
		 */
		static const uint64_t ran[] = {0, 1, 50, 99, 100, 101, 12345};
		for (size_t i = 0; i < sizeof ran / sizeof ran[0]; i++) {
			sim_init(&s);
			set_counter(&s, 1000000, 100, ran[i], widths[w], widths[w] < 64 ? 0x5a : 0);
			CU_ASSERT_EQUAL_FATAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r),
					      MPXKIT__PAGE_COUNTER);
			CU_ASSERT_EQUAL(r.value, 1000000 + ran[i]);
			CU_ASSERT_EQUAL(s.last_counter, 3); /* index - 1 */
			CU_ASSERT_EQUAL(r.tries, 1);
		}
	}
	/* Fixed counters: x86 names them with bit 30 set; the reader passes the number on. */
	sim_init(&s);
	s.page.index = (1u << 30) + 2;
	set_counter(&s, 7, 1000, 3, 48, 0);
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT_EQUAL(r.value, 10);
	CU_ASSERT_EQUAL(s.last_counter, (1u << 30) + 1);
}

/* The kernel's formula done the long way: a 128-bit product, no quotient and remainder. */
static uint64_t delta_128(uint64_t cyc, uint32_t mult, uint16_t shift, uint64_t offset)
{
	return offset + (uint64_t)(((unsigned __int128)cyc * mult) >> shift);
}

static void test_time_scaling(void)
{
	sim s;
	mpxkit__pmc pmc = sim_pmc(&s);
	mpxkit__page_reading r;
	/* A 2.1 GHz TSC as Linux converts it (cyc2ns: mult / 2^shift ns per cycle), and extremes.
	 */
	static const struct {
		uint64_t tsc;
		uint32_t mult;
		uint16_t shift;
	} cases[] = {
	    {123456789012345ull, 8184548u, 24}, /* a day's cycles */
	    {0xffffffffffffull, 0xffffffffu, 31},
	    {0xfedcba9876543210ull, 1u, 0},
	    {1, 3u, 1},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t offset = (uint64_t)0 - delta_128(cases[i].tsc - 1000, cases[i].mult,
							  cases[i].shift, 0); /* the page's "now" */
		uint64_t want = delta_128(cases[i].tsc, cases[i].mult, cases[i].shift, offset);
		sim_init(&s);
		set_counter(&s, 0, 1, 0, 48, 0);
		s.page.cap_user_time = 1;
		s.page.time_mult = cases[i].mult;
		s.page.time_shift = cases[i].shift;
		s.page.time_offset = offset;
		s.tsc = cases[i].tsc;
		CU_ASSERT_EQUAL_FATAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r),
				      MPXKIT__PAGE_COUNTER);
		CU_ASSERT(r.timed);
		CU_ASSERT_EQUAL(r.time_enabled, 5000000 + want);
		CU_ASSERT_EQUAL(r.time_running, 4000000 + want);
		CU_ASSERT_EQUAL(s.rdtsc_calls, 1);
	}

	/* cap_user_time_short: the time stamp is only time_mask wide, counted from time_cycles. */
	sim_init(&s);
	set_counter(&s, 0, 1, 0, 48, 0);
	s.page.cap_user_time = 1;
	s.page.cap_user_time_short = 1;
	s.page.time_mult = 1u << 20;
	s.page.time_shift = 20; /* 1 ns per cycle */
	s.page.time_offset = 0;
	s.page.time_cycles = 0x7000;
	s.page.time_mask = 0xffff;
	s.tsc = 0xabcd0000 | 0x7100; /* 0x100 cycles past time_cycles in the low 16 bits */
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT_EQUAL(r.time_enabled, 5000000 + 0x7100);
	CU_ASSERT_EQUAL(r.time_running, 4000000 + 0x7100);

	/* Without cap_user_time the times are the page's, and no time stamp is read. */
	sim_init(&s);
	set_counter(&s, 0, 1, 0, 48, 0);
	s.tsc = 999999;
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT(!r.timed);
	CU_ASSERT_EQUAL(r.time_enabled, 5000000);
	CU_ASSERT_EQUAL(r.time_running, 4000000);
	CU_ASSERT_EQUAL(s.rdtsc_calls, 0);

	/* With it, but not wanted: the same, and no time stamp read either. */
	s.page.cap_user_time = 1;
	s.page.time_mult = 1;
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 0, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT(!r.timed);
	CU_ASSERT_EQUAL(r.time_enabled, 5000000);
	CU_ASSERT_EQUAL(s.rdtsc_calls, 0);
}

/* A page with 505 counted, rewritten to the same values during the first `writes` tries. */
static void sim_rewritten(sim *s, unsigned writes)
{
	sim_init(s);
	set_counter(s, 500, 10, 5, 48, 0);
	s->writes_left = writes;
	s->next_offset = s->page.offset;
	s->next_counter = s->counter;
}

static void test_sequence_retry(void)
{
	sim s;
	mpxkit__pmc pmc = sim_pmc(&s);
	mpxkit__page_reading r;

	/* Rewritten under the first try: the second try's values, none of the first's. */
	sim_rewritten(&s, 1);
	s.next_offset += 1000; /* the count went on by 1000 at the rewrite */
	s.next_counter += 7;
	CU_ASSERT_EQUAL_FATAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT_EQUAL(r.tries, 2);
	CU_ASSERT_EQUAL(s.rdpmc_calls, 2);
	CU_ASSERT_EQUAL(r.value, 500 + 5 + 1000 + 7);

	/* Three rewrites in a row: the fourth try holds. */
	sim_rewritten(&s, 3);
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_COUNTER);
	CU_ASSERT_EQUAL(r.tries, 4);
	CU_ASSERT_EQUAL(r.value, 505);

	/* A page that never settles, or a write that never ends (odd lock): give up, bounded. */
	sim_rewritten(&s, 1000);
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_BUSY);
	CU_ASSERT_EQUAL(s.rdpmc_calls, MPXKIT__PAGE_TRIES);
	sim_init(&s);
	s.page.lock = 11;
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_BUSY);
	CU_ASSERT_EQUAL(s.rdpmc_calls, 0);
}

/* Not on a counter, or no user rdpmc: the caller must read(2) it, and rdpmc is never executed. */
static void test_fallback(void)
{
	sim s;
	mpxkit__pmc pmc = sim_pmc(&s);
	mpxkit__page_reading r;

	sim_init(&s);
	s.page.index = 0; /* scheduled out, or a software event */
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_OFF);
	sim_init(&s);
	s.page.cap_user_rdpmc = 0; /* /sys/bus/event_source/devices/cpu/rdpmc = 0 */
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_OFF);
	sim_init(&s);
	s.page.cap_bit0_is_deprecated = 0; /* before Linux 3.12: bit 2 means nothing */
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_OFF);
	CU_ASSERT_EQUAL(s.rdpmc_calls, 0);
	sim_init(&s);
	s.page.pmc_width = 0;
	CU_ASSERT_EQUAL(mpxkit__perf_page_read(&s.page, &pmc, 1, &r), MPXKIT__PAGE_OFF);
	CU_ASSERT_EQUAL(s.rdpmc_calls, 0);
}

int main(void)
{
	static const cutest_case cases[] = {
	    {"counter width: sign extension and the bits above it", test_width},
	    {"time_enabled and time_running carried by time_mult/shift/offset", test_time_scaling},
	    {"sequence lock: retry on a rewrite, give up on a page that never settles",
	     test_sequence_retry},
	    {"not on a counter, no rdpmc: fall back", test_fallback},
	    {NULL, NULL},
	};
	static const cutest_suite suites[] = {{"perf mmap page", cases, NULL, NULL},
					      {NULL, NULL, NULL, NULL}};

	return cutest_run("test_perf_page", suites);
}
