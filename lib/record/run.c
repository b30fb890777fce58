/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs a program under callgrind in a private directory and collects its dumps into a trace. */
#define _GNU_SOURCE /* pipe2, vasprintf, environ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpxkit/record.h"

#include "../common/child.h"

void mpxkit_record_options_init(mpxkit_record_options *o)
{
	const mpxkit_cache_geometry i1 = MPXKIT_RECORD_I1, d1 = MPXKIT_RECORD_D1,
				    ll = MPXKIT_RECORD_LL;

	memset(o, 0, sizeof *o);
	o->interval_bb = MPXKIT_RECORD_INTERVAL_BB;
	o->i1 = i1;
	o->d1 = d1;
	o->ll = ll;
}

static int power_of_two(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* The limits valgrind's cache simulator enforces (cachegrind's check_cache). */
int mpxkit_cache_geometry_check(const mpxkit_cache_geometry *g, const char *name, mpxkit_diag *diag)
{
	uint64_t way_bytes;

	if (g == NULL || name == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "cache geometry: missing argument");
	if (g->line < 16 || !power_of_two(g->line))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s: line size %u is not a power of two of at least 16 bytes",
				   name, g->line);
	if (g->assoc == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: associativity must be at least 1",
				   name);
	way_bytes = (uint64_t)g->assoc * g->line;
	if (g->size == 0 || g->size % way_bytes != 0 || !power_of_two(g->size / way_bytes))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s: %" PRIu64
				   " bytes / (%u ways x %u-byte lines) is not a power "
				   "of two number of sets",
				   name, g->size, g->assoc, g->line);
	if (g->size > (UINT64_C(1) << 32))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: size above 4 GiB", name);
	return 0;
}

int mpxkit_cache_geometry_parse(const char *text, const char *name, mpxkit_cache_geometry *out,
				mpxkit_diag *diag)
{
	uint64_t v[3];
	const char *p = text;
	mpxkit_cache_geometry g;
	int rc;

	if (text == NULL || name == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "cache geometry: missing argument");
	for (int i = 0; i < 3; i++) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (errno != 0 || v[i] > UINT32_MAX * (i == 0 ? UINT64_C(2) : UINT64_C(1)))
			goto bad;
		if (*end != (i < 2 ? ',' : '\0'))
			goto bad;
		p = end + (i < 2);
	}
	g.size = v[0];
	g.assoc = (unsigned)v[1];
	g.line = (unsigned)v[2];
	rc = mpxkit_cache_geometry_check(&g, name, diag);
	if (rc == 0)
		*out = g;
	return rc;
bad:
	return mpxkit_fail(diag, MPXKIT_EINVAL,
			   "%s: '%s' is not SIZE,ASSOC,LINE (bytes, ways, bytes)", name, text);
}

/* The file a command name runs, as execvp would find it; NULL with errno set when none. */
static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	int saw_eacces = 0;

	if (*name == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/') != NULL) {
		struct stat st;
		if (stat(name, &st) != 0)
			return NULL;
		if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0) {
			errno = EACCES;
			return NULL;
		}
		return strdup(name);
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t dir_len = strcspn(path, ":");
		size_t size = dir_len + strlen(name) + 3;
		char *file = malloc(size);
		struct stat st;

		if (file == NULL)
			return NULL;
		snprintf(file, size, "%.*s/%s", (int)dir_len, dir_len ? path : ".", name);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(file, X_OK) == 0)
				return file;
			saw_eacces = 1;
		}
		free(file);
		path += dir_len + (path[dir_len] == ':');
	}
	errno = saw_eacces ? EACCES : ENOENT;
	return NULL;
}

static int program_error(const char *what, const char *name, mpxkit_diag *diag)
{
	if (errno == ENOENT || errno == ENOTDIR)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "%s '%s' not found%s", what, name,
				   strchr(name, '/') ? "" : " on PATH");
	if (errno == EACCES)
		return mpxkit_fail(diag, MPXKIT_EPERM, "%s '%s' is not an executable file", what,
				   name);
	if (errno == ENOMEM)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	return mpxkit_fail_sys(diag, "%s '%s'", what, name);
}

/* Removes the private directory and everything valgrind left in it (no subdirectories). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		int fd = dirfd(d);
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(fd, e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

static char *join_path(const char *dir, const char *file)
{
	size_t size = strlen(dir) + strlen(file) + 2;
	char *p = malloc(size);

	if (p)
		snprintf(p, size, "%s/%s", dir, file);
	return p;
}

static char *make_private_dir(const char *tmpdir)
{
	char *dir;

	if (tmpdir == NULL)
		tmpdir = getenv("TMPDIR");
	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	dir = join_path(tmpdir, "mpxkit-record.XXXXXX");
	if (dir != NULL && mkdtemp(dir) == NULL) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* valgrind's argument vector: fixed tool options, then the program and its arguments. */
typedef struct vg_args {
	char *opt[15];
	char **argv;
} vg_args;

static void vg_args_free(vg_args *a)
{
	for (size_t i = 0; i < sizeof a->opt / sizeof a->opt[0]; i++)
		free(a->opt[i]);
	free(a->argv);
}

static char *format_opt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format_opt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static char *geometry_opt(const char *name, const mpxkit_cache_geometry *g)
{
	return format_opt("--%s=%" PRIu64 ",%u,%u", name, g->size, g->assoc, g->line);
}

static int build_args(vg_args *a, const mpxkit_record_options *o, const char *valgrind,
		      const char *dir, const char *program, char *const argv[])
{
	size_t n_opt = 0, argc = 0, k = 0;

	memset(a, 0, sizeof *a);
	a->opt[n_opt++] = strdup(valgrind);
	a->opt[n_opt++] = strdup("--tool=callgrind");
	a->opt[n_opt++] = strdup("--cache-sim=yes");
	a->opt[n_opt++] = strdup("--branch-sim=yes");
	/* Stated explicitly so a changed valgrind default cannot change the trace. */
	a->opt[n_opt++] = strdup(o->instr ? "--separate-threads=yes" : "--separate-threads=no");
	if (o->instr) {
		/* mpxkit profile: costs per instruction address, and the jumps that split them. */
		a->opt[n_opt++] = strdup("--dump-instr=yes");
		a->opt[n_opt++] = strdup("--collect-jumps=yes");
	}
	a->opt[n_opt++] = strdup("--trace-children=no");
	/* No gdbserver FIFOs in $TMPDIR: a valgrind killed (SIGKILL) would leave them behind. */
	a->opt[n_opt++] = strdup("--vgdb=no");
	a->opt[n_opt++] = format_opt("--dump-every-bb=%" PRIu64, o->interval_bb);
	a->opt[n_opt++] = geometry_opt("I1", &o->i1);
	a->opt[n_opt++] = geometry_opt("D1", &o->d1);
	a->opt[n_opt++] = geometry_opt("LL", &o->ll);
	a->opt[n_opt++] = format_opt("--callgrind-out-file=%s/cg.out", dir);
	a->opt[n_opt++] = format_opt("--log-file=%s/valgrind.log", dir);
	for (size_t i = 0; i < n_opt; i++)
		if (a->opt[i] == NULL)
			return -1;
	while (argv[argc])
		argc++;
	a->argv = calloc(n_opt + argc + 2, sizeof *a->argv);
	if (a->argv == NULL)
		return -1;
	for (size_t i = 0; i < n_opt; i++)
		a->argv[k++] = a->opt[i];
	a->argv[k++] = (char *)"--";
	a->argv[k++] = (char *)program;
	for (size_t i = 1; i < argc; i++)
		a->argv[k++] = argv[i];
	a->argv[k] = NULL;
	return 0;
}

/*
 * exec keeps ignored signals and the signal mask.  gzip, for one, installs its
 * handlers only for signals that are not ignored, so a recording made under
 * nohup or from a background job would differ; every program starts clean.
 */
static void reset_signals(void)
{
	struct sigaction dfl;
	sigset_t none;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL); /* the C library's reserved ones refuse: fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Writes errno to the pipe when exec fails, so the parent can tell "no valgrind" apart. */
static void child_exec(char *const argv[], char *const envp[], int err_fd, pid_t parent)
{
	int e;

	mpxkit__die_with_parent(parent);
	reset_signals();
	execve(argv[0], argv, envp ? envp : environ);
	e = errno;
	if (write(err_fd, &e, sizeof e) < 0)
		e = 0;
	_exit(127);
}

/*
 * Like system(3), with the program's end assured: ^C and ^\ reach the program
 * (the foreground group) and not the caller, and SIGINT, SIGTERM or SIGHUP
 * sent to the caller by kill(2), from before the fork on, is passed on to
 * valgrind (mpxkit__forward_begin), so the program stops and the private
 * directory is still removed.
 */
static int spawn_and_wait(char *const argv[], char *const envp[], int *wstatus, int *exec_errno)
{
	int fds[2], rc = -1;
	pid_t pid, parent = getpid();

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	mpxkit__forward_begin();
	pid = fork();
	if (pid == 0)
		child_exec(argv, envp, fds[1], parent);
	mpxkit__forward_to(pid);
	close(fds[1]);
	if (pid > 0) {
		ssize_t got;
		do
			got = read(fds[0], exec_errno, sizeof *exec_errno);
		while (got < 0 && errno == EINTR);
		if (got != (ssize_t)sizeof *exec_errno)
			*exec_errno = 0;
		rc = mpxkit__wait_child(pid, wstatus);
	}
	mpxkit__forward_end();
	close(fds[0]);
	return rc;
}

/* A log line without valgrind's "==PID== " or "--PID-- " prefix. */
static const char *strip_pid_prefix(const char *s)
{
	const char *p = s;

	if ((p[0] != '=' && p[0] != '-') || p[1] != p[0])
		return s;
	p += 2;
	p += strspn(p, "0123456789");
	if (p[0] != s[0] || p[1] != s[0])
		return s;
	return p + 2 + (p[2] == ' ');
}

/* The last non-empty line of valgrind's log, for a failure message. */
static void last_log_line(const char *dir, char *buf, size_t size)
{
	char *path = join_path(dir, "valgrind.log");
	FILE *f = path ? fopen(path, "r") : NULL;
	char line[512];

	buf[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		const char *s;
		line[strcspn(line, "\n")] = '\0';
		s = strip_pid_prefix(line);
		if (*s) {
			size_t n = strlen(s) < size ? strlen(s) : size - 1;
			memcpy(buf, s, n);
			buf[n] = '\0';
		}
	}
	if (f)
		fclose(f);
	free(path);
}

/* Appends arg to the command line, single-quoted when a shell would split or expand it. */
static int append_word(char **cmd, size_t *len, const char *arg)
{
	int quote = *arg == '\0' || arg[strcspn(arg, " \t\n'\"\\$`*?[]{}()<>|&;#~!")] != '\0';
	size_t need = *len + 4 * strlen(arg) + 4;
	char *s = realloc(*cmd, need), *p;

	if (s == NULL)
		return -1;
	*cmd = s;
	p = s + *len;
	if (*len > 0)
		*p++ = ' ';
	if (quote)
		*p++ = '\'';
	for (const char *a = arg; *a; a++) {
		if (*a == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			/* Metadata values are single lines. */
			*p++ = (*a == '\n' || *a == '\r') ? ' ' : *a;
		}
	}
	if (quote)
		*p++ = '\'';
	*p = '\0';
	*len = (size_t)(p - s);
	return 0;
}

char *mpxkit_record_command_line(char *const argv[])
{
	char *cmd = NULL;
	size_t len = 0;

	for (size_t i = 0; argv[i]; i++)
		if (append_word(&cmd, &len, argv[i]) < 0) {
			free(cmd);
			return NULL;
		}
	return cmd ? cmd : strdup("");
}

static int set_run_meta(mpxkit_trace *t, const mpxkit_record_options *o, char *const argv[],
			const mpxkit_record_status *st)
{
	char *cmd = mpxkit_record_command_line(argv), buf[64];
	size_t len = 0;
	int rc = cmd ? 0 : -MPXKIT_ENOMEM;

	if (rc == 0)
		rc = mpxkit_trace_set_meta(t, "command", cmd);
	free(cmd);
	cmd = NULL;
	for (size_t i = 0; o->envp && o->envp[i] && rc == 0; i++)
		rc = append_word(&cmd, &len, o->envp[i]);
	if (rc == 0 && o->envp)
		rc = mpxkit_trace_set_meta(t, "env", cmd ? cmd : "");
	free(cmd);
	if (rc < 0)
		return -MPXKIT_ENOMEM;
	snprintf(buf, sizeof buf, "%" PRIu64, o->interval_bb);
	rc = mpxkit_trace_set_meta(t, "interval_bb", buf);
	snprintf(buf, sizeof buf, "%" PRIu64 ",%u,%u", o->i1.size, o->i1.assoc, o->i1.line);
	if (rc == 0)
		rc = mpxkit_trace_set_meta(t, "cache_I1", buf);
	snprintf(buf, sizeof buf, "%" PRIu64 ",%u,%u", o->d1.size, o->d1.assoc, o->d1.line);
	if (rc == 0)
		rc = mpxkit_trace_set_meta(t, "cache_D1", buf);
	snprintf(buf, sizeof buf, "%" PRIu64 ",%u,%u", o->ll.size, o->ll.assoc, o->ll.line);
	if (rc == 0)
		rc = mpxkit_trace_set_meta(t, "cache_LL", buf);
	if (st->signal)
		snprintf(buf, sizeof buf, "signal %d", st->signal);
	else
		snprintf(buf, sizeof buf, "%d", st->exit_code);
	if (rc == 0)
		rc = mpxkit_trace_set_meta(t, "exit_status", buf);
	return rc;
}

static int check_options(const mpxkit_record_options *o, mpxkit_diag *diag)
{
	int rc;

	if (o->interval_bb == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "interval must be at least 1 basic block");
	rc = mpxkit_cache_geometry_check(&o->i1, "I1", diag);
	if (rc == 0)
		rc = mpxkit_cache_geometry_check(&o->d1, "D1", diag);
	if (rc == 0)
		rc = mpxkit_cache_geometry_check(&o->ll, "LL", diag);
	return rc;
}

/*
 * Turns valgrind's wait status into the program's, or fails when valgrind
 * produced nothing: the final dump (of thread 1 with per-thread dumps) must
 * be there and not empty.
 */
static int check_run(const char *dir, const mpxkit_record_options *o, int wstatus,
		     mpxkit_record_status *st, mpxkit_diag *diag)
{
	char *base = join_path(dir, o->instr ? "cg.out-01" : "cg.out");
	char why[256];
	struct stat sb;
	int rc = 0;

	if (base == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	st->signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	st->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	if (stat(base, &sb) != 0) {
		last_log_line(dir, why, sizeof why);
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "valgrind wrote no profile: %s",
				 why[0]	      ? why
				 : st->signal ? "it was killed by a signal"
					      : "see 'valgrind --tool=callgrind CMD'");
		goto done;
	}
	if (sb.st_size == 0) {
		/* What callgrind leaves when the program replaces itself with exec. */
		rc = mpxkit_fail(
		    diag, MPXKIT_EFORMAT,
		    "valgrind wrote an empty profile: did the program exec another "
		    "one? Programs it executes are not traced; record that one directly");
		goto done;
	}
done:
	free(base);
	return rc;
}

int mpxkit_record_run_dumps(const mpxkit_record_options *o, char *const argv[],
			    int (*consume)(void *arg, const char *base,
					   const mpxkit_record_status *status, mpxkit_diag *diag),
			    void *arg, mpxkit_record_status *status, mpxkit_diag *diag)
{
	mpxkit_record_status st = {0, 0};
	char *program = NULL, *valgrind = NULL, *dir = NULL, *base = NULL;
	vg_args args = {{NULL}, NULL};
	int rc, wstatus = 0, exec_errno = 0;

	if (o == NULL || argv == NULL || argv[0] == NULL || consume == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "record: no program to run");
	rc = check_options(o, diag);
	if (rc < 0)
		return rc;
	program = find_program(argv[0]);
	if (program == NULL)
		return program_error("program", argv[0], diag);
	valgrind = find_program(o->valgrind ? o->valgrind : "valgrind");
	if (valgrind == NULL) {
		rc = program_error("valgrind", o->valgrind ? o->valgrind : "valgrind", diag);
		goto fail;
	}
	dir = make_private_dir(o->tmpdir);
	if (dir == NULL) {
		rc = mpxkit_fail_sys(diag, "cannot create a temporary directory");
		goto fail;
	}
	if (build_args(&args, o, valgrind, dir, program, argv) < 0 ||
	    (base = join_path(dir, "cg.out")) == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto fail;
	}
	if (spawn_and_wait(args.argv, o->envp, &wstatus, &exec_errno) < 0) {
		rc = mpxkit_fail_sys(diag, "cannot start valgrind");
		goto fail;
	}
	if (exec_errno != 0) {
		errno = exec_errno;
		rc = mpxkit_fail_sys(diag, "cannot run %s", valgrind);
		goto fail;
	}
	rc = check_run(dir, o, wstatus, &st, diag);
	if (rc == 0)
		rc = consume(arg, base, &st, diag);
	if (rc == 0 && status)
		*status = st;
fail:
	if (dir)
		remove_dir(dir);
	vg_args_free(&args);
	free(base);
	free(dir);
	free(valgrind);
	free(program);
	return rc;
}

/* What mpxkit_record_run hands the runner: the argv and options the metadata needs. */
typedef struct trace_sink {
	const mpxkit_record_options *o;
	char *const *argv;
	mpxkit_trace *t;
} trace_sink;

static int collect_trace(void *arg, const char *base, const mpxkit_record_status *st,
			 mpxkit_diag *diag)
{
	trace_sink *sink = arg;
	int rc = mpxkit_callgrind_collect(base, &sink->t, diag);

	if (rc < 0)
		return rc;
	rc = set_run_meta(sink->t, sink->o, sink->argv, st);
	if (rc < 0)
		return mpxkit_fail(diag, -rc, "%s", mpxkit_strerror(rc));
	return 0;
}

int mpxkit_record_run(const mpxkit_record_options *o, char *const argv[], mpxkit_trace **out,
		      mpxkit_record_status *status, mpxkit_diag *diag)
{
	trace_sink sink = {o, argv, NULL};
	int rc;

	if (o == NULL || argv == NULL || argv[0] == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "record: no program to run");
	if (o->instr)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "record: per-instruction dumps make no trace "
				   "(mpxkit_record_run_dumps reads them)");
	rc = mpxkit_record_run_dumps(o, argv, collect_trace, &sink, status, diag);
	if (rc < 0) {
		mpxkit_trace_free(sink.t);
		return rc;
	}
	*out = sink.t;
	return 0;
}
