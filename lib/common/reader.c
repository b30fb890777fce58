/* SPDX-License-Identifier: BSD-3-Clause */
/* The bounded reader every parser reads through: NUL bytes in text and oversize input end at once. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "mpxkit/reader.h"

#define CHUNK (1u << 16)
#define DEFAULT_MAX_LINE ((size_t)1 << 20)

struct mpxkit_reader {
	int fd;      /* plain input read with read(); -1 when gz or stream is used */
	int own_fd;  /* close fd at the end (not for stdin) */
	gzFile gz;   /* gzip or plain through zlib */
	FILE *stream; /* the caller's stream */
	char *name;
	const char *what;
	unsigned flags;
	uint64_t max_bytes;
	size_t max_line;
	unsigned char *buf; /* input chunk */
	size_t pos, len;
	size_t nul_at;      /* text: offset of the chunk's first NUL byte, or len */
	int window_read;    /* the last window was one line mpxkit_reader_line already counted */
	char *line;
	size_t line_cap;
	uint64_t lineno;   /* lines handed out */
	uint64_t consumed; /* bytes handed out (line terminators included) */
	uint64_t fetched;  /* bytes read from the input so far */
	int eof;
	int error; /* sticky: the first failure's code */
};

static int sticky(mpxkit_reader *r, int rc)
{
	r->error = rc;
	return rc;
}

static int oom(mpxkit_reader *r, mpxkit_diag *diag)
{
	return sticky(r, mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory after %" PRIu64
							  " bytes",
				     r->name, r->fetched));
}

/* The line a byte at chunk position p sits on, for messages about raw reads and slurps. */
static uint64_t line_at(const mpxkit_reader *r, const unsigned char *start, const unsigned char *p)
{
	uint64_t n = r->lineno + 1;

	for (; start < p; start++)
		n += *start == '\n';
	return n;
}

static int nul_error(mpxkit_reader *r, uint64_t line, mpxkit_diag *diag)
{
	return sticky(r, mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%" PRIu64 ": NUL byte: not a text %s",
				     r->name, line, r->what));
}

static int gz_error(mpxkit_reader *r, mpxkit_diag *diag)
{
	int errnum;
	const char *msg = gzerror(r->gz, &errnum);

	if (errnum == Z_ERRNO)
		return sticky(r, mpxkit_fail_sys(diag, "cannot read %s", r->name));
	if (errnum == Z_MEM_ERROR)
		return oom(r, diag);
	/* zlib names a gzdopen'ed stream "<fd:N>"; the line names the file already. */
	if (strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ": "))
		msg = strstr(msg, ": ") + 2;
	return sticky(r, mpxkit_fail(diag, errnum == Z_BUF_ERROR ? MPXKIT_ETRUNC : MPXKIT_EFORMAT,
				     "%s: gzip stream: %s", r->name, msg));
}

/* Reads the next chunk; 0 (r->len may be 0 at the end) or a negative code. */
static int fill(mpxkit_reader *r, mpxkit_diag *diag)
{
	ssize_t got;

	r->pos = r->len = 0;
	if (r->eof)
		return 0;
	if (r->gz) {
		int n = gzread(r->gz, r->buf, CHUNK);
		if (n < 0)
			return gz_error(r, diag);
		got = n;
		if (n == 0) {
			int errnum;
			gzerror(r->gz, &errnum);
			if (errnum != Z_OK)
				return gz_error(r, diag);
		}
	} else if (r->stream) {
		got = (ssize_t)fread(r->buf, 1, CHUNK, r->stream);
		if (got == 0 && ferror(r->stream))
			return sticky(r, mpxkit_fail_sys(diag, "cannot read %s", r->name));
	} else {
		do
			got = read(r->fd, r->buf, CHUNK);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return sticky(r, mpxkit_fail_sys(diag, "cannot read %s", r->name));
	}
	if (got == 0) {
		r->eof = 1;
		return 0;
	}
	r->len = (size_t)got;
	r->fetched += (uint64_t)got;
	if (r->flags & MPXKIT_READER_TEXT) {
		/* one scan a chunk, not one a line: a line is refused when it holds this byte */
		const unsigned char *z = memchr(r->buf, '\0', r->len);
		r->nul_at = z ? (size_t)(z - r->buf) : r->len;
	}
	if (r->max_bytes && r->fetched > r->max_bytes)
		return sticky(r, mpxkit_fail(diag, MPXKIT_ERANGE,
					     "%s: larger than %" PRIu64 " bytes, the limit for a %s",
					     r->name, r->max_bytes, r->what));
	return 0;
}

static int reader_new(mpxkit_reader **out, const char *name, const mpxkit_reader_options *opt,
		      mpxkit_diag *diag)
{
	mpxkit_reader *r = calloc(1, sizeof *r);

	if (r == NULL || (r->name = strdup(name)) == NULL ||
	    (r->buf = malloc(CHUNK)) == NULL) {
		if (r)
			free(r->name);
		free(r);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
	}
	r->fd = -1;
	r->flags = opt ? opt->flags : 0;
	r->max_bytes = opt ? opt->max_bytes : 0;
	r->max_line = opt && opt->max_line ? opt->max_line : DEFAULT_MAX_LINE;
	r->what = opt && opt->what ? opt->what : "input";
	*out = r;
	return 0;
}

/* Hands fd to zlib when the input may be gzip; zlib then owns it. */
static int attach_fd(mpxkit_reader *r, int fd, int own, mpxkit_diag *diag)
{
	if (!(r->flags & MPXKIT_READER_GZIP)) {
		r->fd = fd;
		r->own_fd = own;
		return 0;
	}
	if (!own && (fd = dup(fd)) < 0)
		return mpxkit_fail_sys(diag, "cannot read %s", r->name);
	r->gz = gzdopen(fd, "rb");
	if (r->gz == NULL) {
		close(fd);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", r->name);
	}
	gzbuffer(r->gz, 1 << 17);
	return 0;
}

/* Does a regular file start with the gzip magic (what zlib looks for)?  Reads without moving. */
static int starts_gzip(int fd)
{
	unsigned char m[2];

	return pread(fd, m, 2, 0) != 2 || (m[0] == 0x1f && m[1] == 0x8b);
}

int mpxkit_reader_open(mpxkit_reader **out, const char *path, const mpxkit_reader_options *opt,
		       mpxkit_diag *diag)
{
	mpxkit_reader *r;
	struct stat st;
	int fd, rc;

	if (out == NULL || path == NULL || *path == '\0')
		return mpxkit_fail(diag, MPXKIT_EINVAL, "input file: missing path");
	rc = reader_new(&r, strcmp(path, "-") == 0 ? "<stdin>" : path, opt, diag);
	if (rc < 0)
		return rc;
	if (strcmp(path, "-") == 0) {
		rc = attach_fd(r, STDIN_FILENO, 0, diag);
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		rc = mpxkit_fail_sys(diag, "cannot open %s", path);
	} else if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			errno = EISDIR;
		rc = mpxkit_fail_sys(diag, "cannot read %s", path);
		close(fd);
	} else if ((r->flags & MPXKIT_READER_GZIP) && S_ISREG(st.st_mode) && !starts_gzip(fd)) {
		/* plain text: read it directly, as zlib would copy it, without zlib's extra copy */
		r->fd = fd;
		r->own_fd = 1;
	} else {
		rc = attach_fd(r, fd, 1, diag);
	}
	if (rc < 0) {
		mpxkit_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int mpxkit_reader_from_stream(mpxkit_reader **out, FILE *f, const char *name,
			      const mpxkit_reader_options *opt, mpxkit_diag *diag)
{
	mpxkit_reader *r;
	int rc;

	if (out == NULL || f == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "input: missing stream");
	rc = reader_new(&r, name ? name : "input", opt, diag);
	if (rc < 0)
		return rc;
	/* zlib reads the descriptor: a stream that buffered nothing yet hands it over as it is. */
	if (r->flags & MPXKIT_READER_GZIP)
		rc = attach_fd(r, fileno(f), 0, diag);
	else
		r->stream = f;
	if (rc < 0) {
		mpxkit_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int grow_line(mpxkit_reader *r, size_t need, mpxkit_diag *diag)
{
	size_t cap = r->line_cap ? r->line_cap : 256;
	char *grown;

	while (cap < need)
		cap *= 2;
	grown = realloc(r->line, cap);
	if (grown == NULL)
		return oom(r, diag);
	r->line = grown;
	r->line_cap = cap;
	return 0;
}

int mpxkit_reader_line(mpxkit_reader *r, char **line, size_t *len, mpxkit_diag *diag)
{
	size_t n = 0;

	if (r->error)
		return mpxkit_fail(diag, -r->error, "%s: read after an error", r->name);
	for (;;) {
		const unsigned char *start, *nl;
		size_t take;
		int rc;

		if (r->pos == r->len) {
			rc = fill(r, diag);
			if (rc < 0)
				return rc;
			if (r->len == 0)
				break;
		}
		start = r->buf + r->pos;
		nl = memchr(start, '\n', r->len - r->pos);
		take = nl ? (size_t)(nl - start) : r->len - r->pos;
		/* no byte before pos was a NUL (that would have stopped the reader), so nul_at >= pos */
		if ((r->flags & MPXKIT_READER_TEXT) && r->nul_at - r->pos < take)
			return nul_error(r, r->lineno + 1, diag);
		if (n + take > r->max_line)
			return sticky(r, mpxkit_fail(diag, MPXKIT_ERANGE,
						     "%s:%" PRIu64 ": line longer than %zu bytes",
						     r->name, r->lineno + 1, r->max_line));
		if (n == 0 && nl) {
			/* The whole line is in the chunk: hand it out in place, no copy. */
			r->buf[r->pos + take] = '\0';
			r->pos += take + 1;
			r->consumed += take + 1;
			r->lineno++;
			*line = (char *)r->buf + (start - r->buf);
			*len = take;
			return 1;
		}
		if (n + take + 1 > r->line_cap && (rc = grow_line(r, n + take + 1, diag)) < 0)
			return rc;
		memcpy(r->line + n, start, take);
		n += take;
		r->pos += take + (nl != NULL);
		r->consumed += take + (nl != NULL);
		if (nl)
			goto got_line;
	}
	if (n == 0)
		return 0;
got_line:
	if (r->line == NULL && grow_line(r, 1, diag) < 0)
		return r->error;
	r->line[n] = '\0';
	r->lineno++;
	*line = r->line;
	*len = n;
	return 1;
}

int mpxkit_reader_lines(mpxkit_reader *r, char **text, size_t *len, mpxkit_diag *diag)
{
	const unsigned char *start, *end, *last;
	char *line;
	size_t n;
	int rc;

	if (r->error)
		return mpxkit_fail(diag, -r->error, "%s: read after an error", r->name);
	r->window_read = 0;
	if (r->pos == r->len) {
		if ((rc = fill(r, diag)) < 0)
			return rc;
		if (r->len == 0)
			return 0;
	}
	/* the whole lines in the chunk, up to the line of its first NUL byte (if any) */
	start = r->buf + r->pos;
	end = r->buf + ((r->flags & MPXKIT_READER_TEXT) ? r->nul_at : r->len);
	for (last = end; last > start && last[-1] != '\n'; last--)
		;
	if (last > start && (size_t)(last - start) <= r->max_line) {
		/* no line longer than the window, and the window within the bound */
		*text = (char *)r->buf + r->pos;
		*len = (size_t)(last - start);
		return 1;
	}
	/*
	 * A line across chunks, a last line without LF, a line holding a NUL,
	 * or lines whose lengths must be checked one by one: one line, read
	 * (and checked) by mpxkit_reader_line, its LF put back after it.
	 */
	if ((rc = mpxkit_reader_line(r, &line, &n, diag)) <= 0)
		return rc;
	if (line == r->line) { /* a copy: room for the LF and a NUL after it */
		if (n + 2 > r->line_cap && (rc = grow_line(r, n + 2, diag)) < 0)
			return rc;
		line = r->line;
		line[n + 1] = '\0';
	}
	line[n] = '\n';
	r->window_read = 1;
	*text = line;
	*len = n + 1;
	return 1;
}

void mpxkit_reader_skip(mpxkit_reader *r, size_t bytes, uint64_t lines)
{
	if (r->window_read) /* counted when it was read */
		return;
	r->pos += bytes;
	r->consumed += bytes;
	r->lineno += lines;
}

int mpxkit_reader_read(mpxkit_reader *r, void *buf, size_t len, size_t *got, mpxkit_diag *diag)
{
	unsigned char *dst = buf;
	size_t done = 0;

	if (r->error)
		return mpxkit_fail(diag, -r->error, "%s: read after an error", r->name);
	while (done < len) {
		size_t take;
		if (r->pos == r->len) {
			int rc = fill(r, diag);
			if (rc < 0)
				return rc;
			if (r->len == 0)
				break;
		}
		take = r->len - r->pos < len - done ? r->len - r->pos : len - done;
		if ((r->flags & MPXKIT_READER_TEXT)) {
			const unsigned char *z = memchr(r->buf + r->pos, '\0', take);
			if (z)
				return nul_error(r, line_at(r, r->buf + r->pos, z), diag);
		}
		memcpy(dst + done, r->buf + r->pos, take);
		r->pos += take;
		r->consumed += take;
		done += take;
	}
	*got = done;
	return 0;
}

int mpxkit_reader_slurp(mpxkit_reader *r, char **out, size_t *out_len, mpxkit_diag *diag)
{
	size_t cap = CHUNK, len = 0;
	char *buf = malloc(cap + 1);

	if (buf == NULL)
		return oom(r, diag);
	for (;;) {
		size_t got;
		int rc;
		if (cap - len < CHUNK) {
			char *grown = cap > SIZE_MAX / 4 ? NULL : realloc(buf, cap * 2 + 1);
			if (grown == NULL) {
				free(buf);
				return oom(r, diag);
			}
			buf = grown;
			cap *= 2;
		}
		rc = mpxkit_reader_read(r, buf + len, CHUNK, &got, diag);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		len += got;
		if (got < CHUNK)
			break;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

uint64_t mpxkit_reader_lineno(const mpxkit_reader *r)
{
	return r->lineno;
}

uint64_t mpxkit_reader_offset(const mpxkit_reader *r)
{
	return r->consumed;
}

const char *mpxkit_reader_name(const mpxkit_reader *r)
{
	return r->name;
}

void mpxkit_reader_close(mpxkit_reader *r)
{
	if (r == NULL)
		return;
	if (r->gz)
		gzclose_r(r->gz);
	else if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->line);
	free(r);
}

int mpxkit_read_file(const char *path, const mpxkit_reader_options *opt, char **buf, size_t *len,
		     mpxkit_diag *diag)
{
	mpxkit_reader *r;
	int rc = mpxkit_reader_open(&r, path, opt, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_reader_slurp(r, buf, len, diag);
	mpxkit_reader_close(r);
	return rc;
}
