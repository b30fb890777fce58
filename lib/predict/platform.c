/* SPDX-License-Identifier: BSD-3-Clause */
/* The machine under `predict record` and `--live`: core kinds (hwloc), cpufreq, powercap. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "predict_impl.h"

/* ---- sysfs files under the root ---------------------------------------------------------------
 */

static int path_of(char *out, size_t cap, const mpxkit_platform *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int path_of(char *out, size_t cap, const mpxkit_platform *p, const char *fmt, ...)
{
	char rel[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof rel)
		return -1;
	n = snprintf(out, cap, "%s%s", strcmp(p->root, "/") == 0 ? "" : p->root, rel);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A small sysfs file's first line, without its newline; -1 when it cannot be read. */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_value(const char *path, const char *value, mpxkit_diag *diag)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (f == NULL)
		return mpxkit_fail_sys(diag, "%s", path);
	bad = fputs(value, f) < 0;
	bad |= fclose(f) != 0;
	if (bad)
		return mpxkit_fail_sys(diag, "%s: cannot write '%s'", path, value);
	return 0;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* ---- core kinds -------------------------------------------------------------------------------
 */

/* The frequencies cpufreq offers one CPU: the available list, else its min and max. */
static void probe_freqs(mpxkit_platform *p, mpxkit_core_kind *k)
{
	char path[768], buf[4096], *s, *end;
	double khz;

	k->n_freqs = 0;
	if (path_of(path, sizeof path, p, "/sys/devices/system/cpu/cpu%d/cpufreq", k->cpus[0]) <
		0 ||
	    !exists(path))
		return;
	k->cpufreq = 1;
	path_of(path, sizeof path, p,
		"/sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_frequencies", k->cpus[0]);
	if (read_line(path, buf, sizeof buf) == 0) {
		for (s = buf; k->n_freqs < MPXKIT_PLATFORM_MAX_FREQS; s = end) {
			khz = strtod(s, &end);
			if (end == s)
				break;
			if (khz > 0)
				k->freq_mhz[k->n_freqs++] = khz / 1000;
		}
	} else {
		const char *names[2] = {"cpuinfo_min_freq", "cpuinfo_max_freq"};
		for (int i = 0; i < 2; i++) {
			path_of(path, sizeof path, p, "/sys/devices/system/cpu/cpu%d/cpufreq/%s",
				k->cpus[0], names[i]);
			if (read_line(path, buf, sizeof buf) == 0 &&
			    (khz = strtod(buf, NULL)) > 0 &&
			    (k->n_freqs == 0 || khz / 1000 != k->freq_mhz[0]))
				k->freq_mhz[k->n_freqs++] = khz / 1000;
		}
	}
	qsort(k->freq_mhz, k->n_freqs, sizeof *k->freq_mhz, mpxkit__pd_cmp_double);
}

static void kind_name(mpxkit_core_kind *k, unsigned n_infos, const struct hwloc_info_s *infos,
		      int index)
{
	for (unsigned i = 0; i < n_infos; i++)
		if (strcmp(infos[i].name, "CoreType") == 0) {
			snprintf(k->name, sizeof k->name, "%s", infos[i].value);
			return;
		}
	snprintf(k->name, sizeof k->name, "kind%d", index);
}

/*
 * hwloc's cpukinds, in hwloc's order (least efficient first).  A machine of which hwloc tells
 * no kinds still has one: all its CPUs.
 */
static int probe_kinds(mpxkit_platform *p, mpxkit_diag *diag)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t set = NULL;
	int nr, rc = 0;

	if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0)
		return mpxkit_fail(diag, MPXKIT_ESYS, "hwloc cannot load the topology");
	nr = hwloc_cpukinds_get_nr(topo, 0);
	if ((set = hwloc_bitmap_alloc()) == NULL) {
		hwloc_topology_destroy(topo);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	for (int i = 0; i < (nr > 0 ? nr : 1) && p->n_kinds < MPXKIT_PLATFORM_MAX_KINDS; i++) {
		mpxkit_core_kind *k = &p->kinds[p->n_kinds];
		struct hwloc_info_s *infos = NULL;
		unsigned n_infos = 0;
		int eff = -1, cpu;
		memset(k, 0, sizeof *k);
		if (nr > 0) {
			if (hwloc_cpukinds_get_info(topo, (unsigned)i, set, &eff, &n_infos, &infos,
						    0) < 0)
				continue;
		} else {
			hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
		}
		k->efficiency = eff;
		kind_name(k, n_infos, infos, i);
		hwloc_bitmap_foreach_begin(cpu, set)
		{
			if (k->n_cpus < MPXKIT_PLATFORM_MAX_CPUS)
				k->cpus[k->n_cpus++] = cpu;
		}
		hwloc_bitmap_foreach_end();
		if (k->n_cpus == 0)
			continue;
		probe_freqs(p, k);
		p->n_kinds++;
	}
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(topo);
	return rc;
}

/* ---- powercap ---------------------------------------------------------------------------------
 */

/* Top-level zones only ("intel-rapl:0", not "intel-rapl:0:0"): subzones are inside them. */
static int top_zone(const char *name)
{
	const char *colon = strchr(name, ':');
	return colon && strchr(colon + 1, ':') == NULL;
}

static int cmp_zone(const void *a, const void *b)
{
	return strcmp(((const mpxkit_energy_zone *)a)->path, ((const mpxkit_energy_zone *)b)->path);
}

/* dir/name/file into out; -1 when it does not fit. */
static int zone_file(char *out, size_t cap, const char *dir, const char *name, const char *file)
{
	int n = snprintf(out, cap, "%s/%s/%s", dir, name, file);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static void probe_zones(mpxkit_platform *p)
{
	char dir[768], path[sizeof p->zones[0].path], buf[128];
	struct dirent *de;
	DIR *d;

	if (path_of(dir, sizeof dir, p, "/sys/class/powercap") < 0 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && p->n_zones < MPXKIT_PLATFORM_MAX_ZONES) {
		mpxkit_energy_zone *z = &p->zones[p->n_zones];
		if (de->d_name[0] == '.' || !top_zone(de->d_name))
			continue;
		if (zone_file(path, sizeof path, dir, de->d_name, "energy_uj") < 0 ||
		    read_line(path, buf, sizeof buf) < 0)
			continue;
		memset(z, 0, sizeof *z);
		memcpy(z->path, path, sizeof z->path);
		if (zone_file(path, sizeof path, dir, de->d_name, "name") < 0 ||
		    read_line(path, z->name, sizeof z->name) < 0)
			snprintf(z->name, sizeof z->name, "%.60s", de->d_name);
		if (zone_file(path, sizeof path, dir, de->d_name, "max_energy_range_uj") == 0 &&
		    read_line(path, buf, sizeof buf) == 0)
			z->max_uj = strtod(buf, NULL);
		p->n_zones++;
	}
	closedir(d);
	qsort(p->zones, p->n_zones, sizeof *p->zones, cmp_zone);
}

int mpxkit_platform_probe(mpxkit_platform *p, const char *root, mpxkit_diag *diag)
{
	int rc;

	memset(p, 0, sizeof *p);
	if (root == NULL || root[0] == '\0')
		root = "/";
	if (strlen(root) >= sizeof p->root)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "sysfs root: longer than %zu bytes",
				   sizeof p->root - 1);
	snprintf(p->root, sizeof p->root, "%s", root);
	if ((rc = probe_kinds(p, diag)) < 0)
		return rc;
	probe_zones(p);
	/* The first piece record would miss, in the order it needs them. */
	if (p->n_kinds == 0)
		snprintf(p->missing, sizeof p->missing, "no core kinds: hwloc found no CPU");
	for (size_t i = 0; p->missing[0] == '\0' && i < p->n_kinds; i++)
		if (!p->kinds[i].cpufreq || p->kinds[i].n_freqs == 0)
			snprintf(p->missing, sizeof p->missing,
				 "no cpufreq: %.120s/sys/devices/system/cpu/cpu%d/cpufreq %s",
				 strcmp(p->root, "/") == 0 ? "" : p->root, p->kinds[i].cpus[0],
				 p->kinds[i].cpufreq ? "lists no frequency" : "is missing");
	if (p->missing[0] == '\0' && p->n_zones == 0)
		snprintf(p->missing, sizeof p->missing,
			 "no energy counter: %.120s/sys/class/powercap has no zone with energy_uj",
			 strcmp(p->root, "/") == 0 ? "" : p->root);
	return 0;
}

/* ---- frequencies ------------------------------------------------------------------------------
 */

struct mpxkit_freq_saved {
	size_t n;
	char (*min_path)[768], (*max_path)[768];
	double *min_khz, *max_khz;
};

/* Pins one CPU: max then min when going up, min then max when going down, so min <= max holds. */
static int pin(const char *min_path, const char *max_path, double cur_min, double khz,
	       mpxkit_diag *diag)
{
	char v[32];
	int rc;

	snprintf(v, sizeof v, "%.0f", khz);
	if (khz >= cur_min) {
		if ((rc = write_value(max_path, v, diag)) == 0)
			rc = write_value(min_path, v, diag);
	} else {
		if ((rc = write_value(min_path, v, diag)) == 0)
			rc = write_value(max_path, v, diag);
	}
	return rc;
}

int mpxkit_platform_set_freq(const mpxkit_platform *p, size_t kind, double freq_mhz,
			     mpxkit_freq_saved **saved, mpxkit_diag *diag)
{
	const mpxkit_core_kind *k;
	mpxkit_freq_saved *s;
	char buf[64];
	int rc = 0;

	if (kind >= p->n_kinds)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "core kind %zu: no such kind", kind);
	k = &p->kinds[kind];
	if (!k->cpufreq)
		return mpxkit_fail(diag, MPXKIT_ENOSUPP, "%s", p->missing);
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->min_path = calloc(k->n_cpus, sizeof *s->min_path)) == NULL ||
	    (s->max_path = calloc(k->n_cpus, sizeof *s->max_path)) == NULL ||
	    (s->min_khz = calloc(k->n_cpus, sizeof *s->min_khz)) == NULL ||
	    (s->max_khz = calloc(k->n_cpus, sizeof *s->max_khz)) == NULL) {
		mpxkit_platform_restore(s, NULL);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < k->n_cpus && rc == 0; i++) {
		path_of(s->min_path[i], sizeof s->min_path[i], p,
			"/sys/devices/system/cpu/cpu%d/cpufreq/scaling_min_freq", k->cpus[i]);
		path_of(s->max_path[i], sizeof s->max_path[i], p,
			"/sys/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", k->cpus[i]);
		if (read_line(s->min_path[i], buf, sizeof buf) < 0 ||
		    (s->min_khz[i] = strtod(buf, NULL)) <= 0 ||
		    read_line(s->max_path[i], buf, sizeof buf) < 0 ||
		    (s->max_khz[i] = strtod(buf, NULL)) <= 0) {
			rc = mpxkit_fail(diag, MPXKIT_ENOSUPP, "cpufreq: cannot read %s or %s",
					 s->min_path[i], s->max_path[i]);
			break;
		}
		s->n = i + 1;
		rc = pin(s->min_path[i], s->max_path[i], s->min_khz[i], freq_mhz * 1000, diag);
	}
	if (rc < 0) {
		mpxkit_platform_restore(s, NULL);
		return rc;
	}
	*saved = s;
	return 0;
}

int mpxkit_platform_restore(mpxkit_freq_saved *s, mpxkit_diag *diag)
{
	char v[32];
	int rc = 0, r;

	if (s == NULL)
		return 0;
	for (size_t i = s->n; i-- > 0;) {
		/* min = max = the pinned value now: raise max first unless it goes down. */
		char cur[64];
		double pinned =
		    read_line(s->max_path[i], cur, sizeof cur) == 0 ? strtod(cur, NULL) : 0;
		snprintf(v, sizeof v, "%.0f", s->max_khz[i]);
		if (s->max_khz[i] >= pinned) {
			r = write_value(s->max_path[i], v, diag);
			snprintf(v, sizeof v, "%.0f", s->min_khz[i]);
			r |= write_value(s->min_path[i], v, diag);
		} else {
			char mx[32];
			snprintf(mx, sizeof mx, "%s", v);
			snprintf(v, sizeof v, "%.0f", s->min_khz[i]);
			r = write_value(s->min_path[i], v, diag);
			r |= write_value(s->max_path[i], mx, diag);
		}
		if (r && rc == 0)
			rc = -MPXKIT_ESYS;
	}
	free(s->min_path);
	free(s->max_path);
	free(s->min_khz);
	free(s->max_khz);
	free(s);
	return rc;
}

int mpxkit_platform_cur_freq(const mpxkit_platform *p, int cpu, double *mhz, mpxkit_diag *diag)
{
	char path[768], buf[64];
	double khz;

	path_of(path, sizeof path, p, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
		cpu);
	if (read_line(path, buf, sizeof buf) < 0 || !((khz = strtod(buf, NULL)) > 0))
		return mpxkit_fail(diag, MPXKIT_ENOSUPP, "no cpufreq: cannot read %s", path);
	*mhz = khz / 1000;
	return 0;
}

/* ---- energy -----------------------------------------------------------------------------------
 */

int mpxkit_platform_energy(const mpxkit_platform *p, double *uj, mpxkit_diag *diag)
{
	char buf[64], *end;

	if (p->n_zones == 0)
		return mpxkit_fail(diag, MPXKIT_ENOSUPP, "%s",
				   p->missing[0] ? p->missing : "no energy counter");
	for (size_t i = 0; i < p->n_zones; i++) {
		if (read_line(p->zones[i].path, buf, sizeof buf) < 0)
			return mpxkit_fail_sys(diag, "%s", p->zones[i].path);
		uj[i] = strtod(buf, &end);
		if (end == buf || !(uj[i] >= 0))
			return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: '%.40s' is not a count",
					   p->zones[i].path, buf);
	}
	return 0;
}

double mpxkit_platform_energy_delta(const mpxkit_platform *p, const double *before,
				    const double *after)
{
	double j = 0;

	for (size_t i = 0; i < p->n_zones; i++) {
		double d = after[i] - before[i];
		if (d < 0 && p->zones[i].max_uj > 0)
			d += p->zones[i].max_uj; /* the counter wrapped once */
		j += d * 1e-6;
	}
	return j;
}
