/* SPDX-License-Identifier: BSD-3-Clause */
/* PAPI component "mpxkit": events mpxkit:::<event> multiplexed in software, estimated online. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* PAPI's internal headers predate -Wstrict-prototypes; the component itself is held to it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "papi.h"
#include "papi_internal.h"
#include "papi_vector.h"
#pragma GCC diagnostic pop

#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

#ifndef MPXKIT_VERSION
#define MPXKIT_VERSION "unknown"
#endif

/* Events one event set may hold; the engine multiplexes them on MPXKIT_COUNTERS counters. */
#define MPXKIT_MAX_EVENTS 64

papi_vector_t _mpxkit_vector;

/* One native event: an event the counter source can count on this machine. */
typedef struct mpxkit_native {
	char *name; /* the source's name, "perf::TASK-CLOCK"; PAPI prefixes "mpxkit:::" */
	char *description;
	char *unit;
} mpxkit_native;

/*
 * Filled once by init_component, read-only afterwards, so threads share them
 * without locks: the native table, the settings read from the environment,
 * and the trace every event set replays under MPXKIT_REPLAY.
 */
static mpxkit_native *natives;
static int n_natives;
static mpxkit_sched_config settings;
static mpxkit_trace *replay_trace;

/*
 * Per event set: one scheduler over one source.  The slots are opened for the
 * thread that adds the events, because perf_event counts the task it was
 * opened in; options that change what is counted (domain, inherit) reopen
 * them.  The scheduler's rotation thread runs between start and stop.
 */
typedef struct mpxkit_control {
	mpxkit_sched *sched;
	int n_events;
	int kernel;  /* PAPI_DOM_KERNEL asked for */
	int inherit; /* PAPI_INHERIT asked for */
	unsigned int codes[MPXKIT_MAX_EVENTS];
	long long values[MPXKIT_MAX_EVENTS];
	double estimates[MPXKIT_MAX_EVENTS];
} mpxkit_control;

/* Per thread.  Nothing: every count and the rotation state live in the event set. */
typedef struct mpxkit_context {
	int reserved;
} mpxkit_context;

static int papi_error(int mpxkit_code)
{
	switch (-mpxkit_code) {
	case MPXKIT_OK:
		return PAPI_OK;
	case MPXKIT_ENOENT:
		return PAPI_ENOEVNT;
	case MPXKIT_ENOSUPP:
		return PAPI_ENOSUPP;
	case MPXKIT_EPERM:
		return PAPI_EPERM;
	case MPXKIT_ENOMEM:
		return PAPI_ENOMEM;
	case MPXKIT_EINVAL:
	case MPXKIT_ERANGE:
		return PAPI_EINVAL;
	case MPXKIT_ESYS:
	case MPXKIT_EIO:
		return PAPI_ESYS;
	case MPXKIT_ESTATE:
		return PAPI_EISRUN;
	default:
		return PAPI_ECMP;
	}
}

__attribute__((format(printf, 1, 2))) static void set_disabled_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(_mpxkit_vector.cmp_info.disabled_reason,
		  sizeof _mpxkit_vector.cmp_info.disabled_reason, fmt, ap);
	va_end(ap);
}

static void free_natives(void)
{
	for (int i = 0; i < n_natives; i++) {
		free(natives[i].name);
		free(natives[i].description);
		free(natives[i].unit);
	}
	free(natives);
	natives = NULL;
	n_natives = 0;
}

/* Copies the probe source's event list into the native table. */
static int load_natives(mpxkit_source *probe)
{
	mpxkit_source_event ev;
	size_t n = 0;

	while (mpxkit_source_list(probe, n, &ev) == 0)
		n++;
	if (n == 0)
		return PAPI_OK;
	natives = calloc(n, sizeof *natives);
	if (natives == NULL)
		return PAPI_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (mpxkit_source_list(probe, i, &ev) != 0)
			return PAPI_EBUG;
		natives[i].name = strdup(ev.name);
		natives[i].description = strdup(ev.description);
		natives[i].unit = strdup(ev.unit);
		n_natives++;
		if (!natives[i].name || !natives[i].description || !natives[i].unit)
			return PAPI_ENOMEM;
	}
	return PAPI_OK;
}

/* The counter source the settings ask for, with no events yet. */
static int open_source(mpxkit_source **out, const mpxkit_source_target *target, mpxkit_diag *diag)
{
	if (replay_trace)
		return mpxkit_source_open_replay(out, replay_trace, settings.slice_ns, diag);
	return mpxkit_source_open_perf(out, target, diag);
}

static int mpxkit_init_component(int cidx)
{
	mpxkit_source *probe = NULL;
	mpxkit_diag diag = {0};
	int rc = mpxkit_sched_config_env(&settings, &diag);

	if (rc < 0) {
		set_disabled_reason("%s", mpxkit_diag_message(&diag, rc));
		rc = PAPI_EINVAL;
		goto fail;
	}
	if (settings.replay[0]) {
		rc = mpxkit_trace_read(settings.replay, &replay_trace, &diag);
		if (rc < 0) {
			set_disabled_reason("MPXKIT_REPLAY: %s", mpxkit_diag_message(&diag, rc));
			rc = PAPI_EINVAL;
			goto fail;
		}
	}
	rc = open_source(&probe, NULL, &diag);
	if (rc < 0) {
		set_disabled_reason("%s", mpxkit_diag_message(&diag, rc));
		rc = PAPI_ENOSUPP;
		goto fail;
	}
	rc = load_natives(probe);
	if (rc != PAPI_OK) {
		set_disabled_reason("%s", "cannot build the native event table (out of memory)");
		goto fail;
	}
	if (n_natives == 0) {
		/* Adding the most basic event tells the user why nothing opened. */
		int why = mpxkit_source_add(probe, "perf::TASK-CLOCK", &diag);
		set_disabled_reason("%s counts no event here: %s",
				    replay_trace ? "the replayed trace" : "perf_event_open",
				    mpxkit_diag_message(&diag, why < 0 ? why : -MPXKIT_ENOSUPP));
		rc = PAPI_ENOSUPP;
		goto fail;
	}
	/* A reference the source cannot count would fail every event set: say so once, here. */
	if (settings.reference[0] &&
	    (rc = mpxkit_source_add(probe, settings.reference, &diag)) < 0) {
		set_disabled_reason("MPXKIT_REFERENCE=%s: %s", settings.reference,
				    mpxkit_diag_message(&diag, rc));
		rc = PAPI_EINVAL;
		goto fail;
	}
	mpxkit_source_free(probe);
	_mpxkit_vector.cmp_info.num_native_events = n_natives;
	_mpxkit_vector.cmp_info.CmpIdx = cidx;
	_mpxkit_vector.cmp_info.initialized = 1;
	_mpxkit_vector.cmp_info.disabled = PAPI_OK;
	return PAPI_OK;

fail:
	mpxkit_source_free(probe);
	free_natives();
	mpxkit_trace_free(replay_trace);
	replay_trace = NULL;
	_mpxkit_vector.cmp_info.disabled = rc;
	return rc;
}

static int mpxkit_shutdown_component(void)
{
	free_natives();
	mpxkit_trace_free(replay_trace);
	replay_trace = NULL;
	return PAPI_OK;
}

static int mpxkit_init_thread(hwd_context_t *ctx)
{
	memset(ctx, 0, sizeof(mpxkit_context));
	return PAPI_OK;
}

static int mpxkit_shutdown_thread(hwd_context_t *ctx)
{
	(void)ctx;
	return PAPI_OK;
}

static int mpxkit_init_control_state(hwd_control_state_t *ctl)
{
	memset(ctl, 0, sizeof(mpxkit_control));
	return PAPI_OK;
}

/* (Re)opens the event set's slots in the calling thread with its current options. */
static int open_slots(mpxkit_control *c)
{
	mpxkit_source_target target = MPXKIT_SOURCE_SELF;
	mpxkit_source *source = NULL;
	mpxkit_diag diag = {0};
	int rc;

	mpxkit_sched_free(c->sched);
	c->sched = NULL;
	if (c->n_events == 0)
		return PAPI_OK;
	target.kernel = c->kernel;
	target.inherit = c->inherit;
	rc = open_source(&source, &target, &diag);
	for (int i = 0; rc >= 0 && i < c->n_events; i++)
		rc = mpxkit_source_add(source, natives[c->codes[i]].name, &diag);
	if (rc >= 0)
		rc = mpxkit_sched_new(&c->sched, source, &settings, &diag);
	if (rc < 0) {
		PAPIERROR("mpxkit: %s", mpxkit_diag_message(&diag, rc));
		mpxkit_source_free(source);
		c->n_events = 0;
		return papi_error(rc);
	}
	return PAPI_OK;
}

static int mpxkit_update_control_state(hwd_control_state_t *ctl, NativeInfo_t *native, int count,
				       hwd_context_t *ctx)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (count < 0 || count > MPXKIT_MAX_EVENTS)
		return PAPI_ECOUNT;
	for (int i = 0; i < count; i++) {
		if (native[i].ni_event < 0 || native[i].ni_event >= n_natives)
			return PAPI_ENOEVNT;
		c->codes[i] = (unsigned int)native[i].ni_event;
		native[i].ni_position = i;
	}
	c->n_events = count;
	return open_slots(c);
}

static int mpxkit_cleanup_eventset(hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	mpxkit_sched_free(c->sched);
	c->sched = NULL;
	c->n_events = 0;
	return PAPI_OK;
}

static int mpxkit_start(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (c->sched == NULL)
		return c->n_events == 0 ? PAPI_OK : PAPI_EBUG;
	return papi_error(mpxkit_sched_start(c->sched));
}

static int mpxkit_stop(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (c->sched == NULL)
		return PAPI_OK;
	return papi_error(mpxkit_sched_stop(c->sched));
}

static int mpxkit_reset(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (c->sched == NULL)
		return PAPI_OK;
	return papi_error(mpxkit_sched_reset(c->sched));
}

/* The estimated totals, rounded to the nearest count; in bounded time (see mpxkit/sched.h). */
static int mpxkit_read(hwd_context_t *ctx, hwd_control_state_t *ctl, long long **events, int flags)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	(void)flags;
	if (c->sched != NULL) {
		int rc = mpxkit_sched_read(c->sched, c->estimates, NULL);
		if (rc < 0)
			return papi_error(rc);
		for (int i = 0; i < c->n_events; i++)
			c->values[i] =
			    c->estimates[i] >= 9.2e18 ? LLONG_MAX : llround(c->estimates[i]);
	}
	*events = c->values;
	return PAPI_OK;
}

/* Domains: user mode always; kernel mode as well when asked (the kernel may refuse it). */
static int mpxkit_set_domain(hwd_control_state_t *ctl, int domain)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	if (!(domain & PAPI_DOM_USER) || (domain & ~(PAPI_DOM_USER | PAPI_DOM_KERNEL)))
		return PAPI_EINVAL;
	c->kernel = (domain & PAPI_DOM_KERNEL) != 0;
	return open_slots(c);
}

static int mpxkit_ctl(hwd_context_t *ctx, int code, _papi_int_option_t *option)
{
	mpxkit_control *c;

	(void)ctx;
	switch (code) {
	case PAPI_DOMAIN:
		return mpxkit_set_domain(option->domain.ESI->ctl_state, option->domain.domain);
	case PAPI_GRANUL:
		return option->granularity.granularity == PAPI_GRN_THR ? PAPI_OK : PAPI_EINVAL;
	case PAPI_INHERIT:
		c = (mpxkit_control *)option->inherit.ESI->ctl_state;
		c->inherit = option->inherit.inherit != 0;
		return open_slots(c);
	default:
		return PAPI_ENOSUPP;
	}
}

static int mpxkit_ntv_enum_events(unsigned int *code, int modifier)
{
	switch (modifier) {
	case PAPI_ENUM_FIRST:
		if (n_natives == 0)
			return PAPI_ENOEVNT;
		*code = 0;
		return PAPI_OK;
	case PAPI_ENUM_EVENTS:
		if (*code + 1 >= (unsigned int)n_natives)
			return PAPI_ENOEVNT;
		(*code)++;
		return PAPI_OK;
	default:
		return PAPI_EINVAL;
	}
}

static int mpxkit_ntv_name_to_code(const char *name, unsigned int *code)
{
	for (int i = 0; i < n_natives; i++) {
		if (strcasecmp(name, natives[i].name) == 0) {
			*code = (unsigned int)i;
			return PAPI_OK;
		}
	}
	return PAPI_ENOEVNT;
}

static int copy_out(char *dst, int len, const char *src)
{
	if (len <= 0)
		return PAPI_EINVAL;
	snprintf(dst, (size_t)len, "%s", src);
	return PAPI_OK;
}

static int mpxkit_ntv_code_to_name(unsigned int code, char *name, int len)
{
	if (code >= (unsigned int)n_natives)
		return PAPI_ENOEVNT;
	return copy_out(name, len, natives[code].name);
}

static int mpxkit_ntv_code_to_descr(unsigned int code, char *descr, int len)
{
	if (code >= (unsigned int)n_natives)
		return PAPI_ENOEVNT;
	return copy_out(descr, len, natives[code].description);
}

static int mpxkit_ntv_code_to_info(unsigned int code, PAPI_event_info_t *info)
{
	if (code >= (unsigned int)n_natives)
		return PAPI_ENOEVNT;
	copy_out(info->symbol, sizeof info->symbol, natives[code].name);
	copy_out(info->long_descr, sizeof info->long_descr, natives[code].description);
	copy_out(info->short_descr, sizeof info->short_descr, natives[code].description);
	copy_out(info->units, sizeof info->units, natives[code].unit);
	info->data_type = PAPI_DATATYPE_UINT64;
	return PAPI_OK;
}

/* clang-format off */
papi_vector_t _mpxkit_vector = {
	.cmp_info = {
		.name = "mpxkit",
		.short_name = "mpxkit",
		.description = "Software multiplexing with estimators (Linux perf_event, or a replayed trace)",
		.version = MPXKIT_VERSION,
		.num_cntrs = MPXKIT_MAX_EVENTS,
		.num_mpx_cntrs = MPXKIT_MAX_EVENTS,
		.default_domain = PAPI_DOM_USER,
		.available_domains = PAPI_DOM_USER | PAPI_DOM_KERNEL,
		.default_granularity = PAPI_GRN_THR,
		.available_granularities = PAPI_GRN_THR,
		.hardware_intr_sig = PAPI_INT_SIGNAL,
	},
	.size = {
		.context = sizeof(mpxkit_context),
		.control_state = sizeof(mpxkit_control),
		.reg_value = 1,
		.reg_alloc = 1,
	},
	.init_component = mpxkit_init_component,
	.shutdown_component = mpxkit_shutdown_component,
	.init_thread = mpxkit_init_thread,
	.shutdown_thread = mpxkit_shutdown_thread,
	.init_control_state = mpxkit_init_control_state,
	.update_control_state = mpxkit_update_control_state,
	.cleanup_eventset = mpxkit_cleanup_eventset,
	.start = mpxkit_start,
	.stop = mpxkit_stop,
	.read = mpxkit_read,
	.reset = mpxkit_reset,
	.ctl = mpxkit_ctl,
	.set_domain = mpxkit_set_domain,
	.ntv_enum_events = mpxkit_ntv_enum_events,
	.ntv_name_to_code = mpxkit_ntv_name_to_code,
	.ntv_code_to_name = mpxkit_ntv_code_to_name,
	.ntv_code_to_descr = mpxkit_ntv_code_to_descr,
	.ntv_code_to_info = mpxkit_ntv_code_to_info,
};
/* clang-format on */
