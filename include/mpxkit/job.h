/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI jobs: which rank this process is, one dump per rank that never replaces another's, merge,
 * summary. */
#ifndef MPXKIT_JOB_H
#define MPXKIT_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mpxkit/error.h"
#include "mpxkit/pcz.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every function follows include/mpxkit/error.h.  doc/mpi.md describes the
 * launchers' variables, the name templates, the no-clobber rule, the merged
 * file and the summary.
 */

/* ---- Who this process is --------------------------------------------------- */

#define MPXKIT_JOB_ID_MAX   128
#define MPXKIT_JOB_HOST_MAX 256

typedef struct mpxkit_job {
	char launcher[16]; /* "openmpi", "pmix", "hydra", "pmi", "slurm", or "none" */
	int has_rank;	   /* 1 when a launcher gave the rank */
	long rank;	   /* 0 outside a launcher (an MPI singleton is rank 0 of 1) */
	long size; /* ranks in the job; 1 outside a launcher; 0 when the launcher does not say */
	char id[MPXKIT_JOB_ID_MAX];	/* the job id, "" when the launcher gives none */
	char host[MPXKIT_JOB_HOST_MAX]; /* this host's name */
	long pid;
	/* id and host keep only [A-Za-z0-9._-]; any other byte becomes '_', so both fit a file
	 * name. */
} mpxkit_job;

/*
 * Reads the launcher's variables: Open MPI (OMPI_COMM_WORLD_RANK), PMIx
 * (PMIX_RANK), MPICH/Hydra and other PMI launchers (PMI_RANK), Slurm
 * (SLURM_PROCID within a step), in that order, the first one set winning.
 * envp is a NULL-terminated "NAME=value" list, or NULL for the process's
 * environment.  An empty variable counts as unset; a rank or size that is
 * set but not a whole number, or a rank not below the size, fails with
 * EINVAL and names the variable.
 */
int mpxkit_job_detect(mpxkit_job *job, const char *const *envp, mpxkit_diag *diag);

/*
 * Expands a dump name template: %r the rank, %s the job size, %h the host,
 * %p the pid, %j the job id, %% a '%'.  When a launcher gave the rank and the
 * template has neither %r nor %p, ".RANK" goes before the extension of the
 * last path component (job.pcz -> job.3.pcz; an extension is a literal '.'
 * followed by no '%'), or at the end when there is none.  Fails with EINVAL
 * on another directive, %j without a job id or %s without a size, and with
 * ERANGE when the name does not fit in out_size.
 */
int mpxkit_job_expand(const mpxkit_job *job, const char *tmpl, char *out, size_t out_size,
		      mpxkit_diag *diag);

/* ---- One dump per process --------------------------------------------------- */

/*
 * A dump to write at the end of a run: the job, the expanded path, and the
 * time the file system gave a file created next to it when the dump was set
 * up.  A file under the dump's name that changed at or after that time, or
 * that is a dump of the same job (same launcher and job id), comes from
 * another process of this run: it is never replaced (doc/mpi.md).
 */
typedef struct mpxkit_job_dump {
	mpxkit_job job;
	char path[4096];
	struct timespec since;
} mpxkit_job_dump;

/*
 * Detects the job (envp as for mpxkit_job_detect), expands tmpl, and checks
 * that the directory takes a new file by creating one and removing it
 * (O_TMPFILE where the file system has it, so nothing is left even by a
 * crash); its time is d->since.  Fails on a bad template, a path that names
 * a directory, or a directory that cannot be written ("cannot write in DIR:
 * reason").
 */
int mpxkit_job_dump_init(mpxkit_job_dump *d, const char *tmpl, const char *const *envp,
			 mpxkit_diag *diag);

/*
 * Adds the job to a dump's metadata: job.launcher, job.rank, job.size (when
 * known), job.id (when known), host and pid.  Call before the first region.
 */
int mpxkit_job_set_meta(const mpxkit_job *job, mpxkit_pcz_writer *w, mpxkit_diag *diag);

/*
 * Writes a finished dump (len bytes, as mpxkit_pcz_writer_close_memory gives
 * them) under d->path through mpxkit_outfile_commit_keep: a file of another
 * process of the run is kept, and the dump then takes the first free name
 * PATH-1.EXT, PATH-2.EXT, ...  written (written_size bytes, NULL: not
 * wanted) gets the name used.
 */
int mpxkit_job_dump_write(const mpxkit_job_dump *d, const void *data, size_t len, char *written,
			  size_t written_size, mpxkit_diag *diag);

/* ---- Merging the dumps of a job ---------------------------------------------- */

typedef struct mpxkit_job_merge_options {
	const mpxkit_pcz_options *pcz; /* NULL: the defaults, with placement */
	/* Called after each input is merged (in rank order); may be NULL. */
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
} mpxkit_job_merge_options;

typedef struct mpxkit_job_merge_result {
	size_t n_ranks;	    /* inputs merged, one per rank */
	long size;	    /* the job's size from the inputs, 0 when they do not say */
	uint64_t n_regions; /* regions written */
	uint64_t n_units;   /* units written, summed over regions */
	uint64_t bytes_in;  /* sum of the inputs' sizes */
	/* Ranks whose regions do not follow the lowest rank's names in order: the first of them. */
	size_t n_misaligned;
	long misaligned_rank;
	char misaligned_note[192];
} mpxkit_job_merge_result;

/*
 * Merges the dumps of one job's ranks into one .pcz at out_path (written
 * through mpxkit_outfile).  Every input must carry job.rank; ranks must be
 * distinct; launcher, job id and size must agree, and so must the event
 * lists (names and order).  Otherwise it fails with EINVAL before writing,
 * naming the two inputs that differ.  The output holds each rank's regions
 * in rank order, units named rank<R>.<unit> with their cpu and numa, the
 * metadata every input shares, rank.<R>.<key> for the rest, merge.ranks, and
 * the topology of the lowest rank's host (topology.rank).  Inputs are read
 * one at a time: memory is bounded by the largest input, not their number.
 * res may be NULL.
 */
int mpxkit_job_merge(const char *out_path, size_t n_inputs, const char *const *inputs,
		     const mpxkit_job_merge_options *opt, mpxkit_job_merge_result *res,
		     mpxkit_diag *diag);

/* ---- A job's summary --------------------------------------------------------- */

/* Spread of one event over a population (units, or ranks): values are counts. */
typedef struct mpxkit_job_spread {
	double min, median, max; /* median of an even count: the mean of the middle two */
	size_t n_flagged;	 /* members beyond the imbalance factor */
} mpxkit_job_spread;

typedef struct mpxkit_job_summary {
	size_t n_events;
	const char *const *events;
	const char *regions; /* what was summed: "stop.total", or "all" */
	size_t n_ranks;
	const long *ranks;	 /* ascending */
	size_t n_units;		 /* (rank, thread) pairs, in rank order, then first appearance */
	const size_t *unit_rank; /* per unit: index into ranks */
	const char *const *unit_names;	 /* per unit: its name without the rank<R>. prefix */
	const int *unit_cpu, *unit_numa; /* per unit: last placement seen, -1 unknown */
	const uint64_t *unit_counts;	 /* [unit * n_events + e]: summed over regions and steps */
	const uint64_t *rank_counts;	 /* [rank * n_events + e]: summed over the rank's units */
	const uint64_t *totals;		 /* [e]: summed over every unit */
	const mpxkit_job_spread *unit_spread; /* [e] over units */
	const mpxkit_job_spread *rank_spread; /* [e] over ranks */
	double factor;			      /* the imbalance factor the flags use */
	const unsigned char *unit_flags;      /* [unit * n_events + e]: 1 when imbalanced */
	const unsigned char *rank_flags;      /* [rank * n_events + e]: 1 when imbalanced */
	/*
	 * A dump with intervals (doc/pcz-format.md, "Intervals"): events are
	 * the estimates, counts their sums over the steps that counted the
	 * event.  Without intervals every count is taken as exact: lo = hi =
	 * the total, nothing is not counted.
	 */
	int intervals;
	double interval_level;		 /* the file's interval_level; NaN when not given */
	const uint64_t *total_lo, *total_hi; /* [e]: bounds of totals; hi 2^64-1 is unbounded */
	const uint64_t *not_counted;	 /* [e]: the (unit, step) values no slice counted */
	/* [unit or rank * n_events + e]: 1 when none of its steps counted the event; such
	 * members are left out of the spreads and never flagged. */
	const unsigned char *unit_not_counted, *rank_not_counted;
} mpxkit_job_summary;

#define MPXKIT_JOB_FACTOR_DEFAULT 1.25

/*
 * Reads a dump (one rank's, or a merged job's) and sums each unit's counts
 * over the regions named `region` (NULL: "stop.total" when the file has such
 * a region, which holds what each PAPI_stop returned, else every region).
 * A count is imbalanced when it exceeds factor times the median of its
 * population, or is below the median divided by factor (factor > 1; a
 * nonzero count against a zero median is imbalanced).  Sums that pass 2^64
 * fail with ERANGE.  Free with mpxkit_job_summary_free.
 */
int mpxkit_job_summarize(const char *path, const char *region, double factor,
			 mpxkit_job_summary **out, mpxkit_diag *diag);

/* free(NULL) semantics. */
void mpxkit_job_summary_free(mpxkit_job_summary *s);

#ifdef __cplusplus
}
#endif
#endif
