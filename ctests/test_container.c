/* SPDX-License-Identifier: BSD-3-Clause */
/* The sectioned container: round trips, every flipped bit and every truncation refused, strict framing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cutest.h"
#include "mpxkit/container.h"

static const mpxkit_container_format fmt = {
	.name = "test",
	.magic = 0x5453548Au, /* "\x8ATST" */
	.min_version = 1,
	.max_version = 2,
	.max_section = 1 << 16,
	.max_sections = 8,
};

static int setup(void)
{
	return cutest_scratch_make("container");
}

/* Three sections, one of them empty. */
static void sample(unsigned char **out, size_t *len)
{
	static const char a[] = "alpha", c[] = "gamma gamma";
	const uint32_t tags[] = { MPXKIT_TAG('A', 'A', 'A', 'A'), MPXKIT_TAG('B', 'B', 'B', '_'),
				  MPXKIT_TAG('c', 'c', '0', '9') };
	const void *payloads[] = { a, "", c };
	const size_t lens[] = { 5, 0, 11 };

	CU_ASSERT_EQUAL_FATAL(mpxkit_container_encode(&fmt, 2, tags, payloads, lens, 3, out, len, NULL),
			      0);
}

/* Reads every section; 0 and the count when the whole file verifies, else the error. */
static int read_all(mpxkit_container_reader *r, size_t *n, mpxkit_diag *d)
{
	uint32_t tag;
	const void *p;
	size_t len;
	int rc;

	*n = 0;
	while ((rc = mpxkit_container_next(r, &tag, &p, &len, d)) == 1)
		(*n)++;
	return rc;
}

static int decode(const unsigned char *buf, size_t len, size_t *n, mpxkit_diag *d)
{
	mpxkit_container_reader *r;
	int rc = mpxkit_container_open_buffer(&r, buf, len, "mem", &fmt, d);

	if (rc < 0)
		return rc;
	rc = read_all(r, n, d);
	mpxkit_container_close(r);
	return rc;
}

static void test_layout_by_hand(void)
{
	unsigned char *buf;
	size_t len;

	sample(&buf, &len);
	/* header 16, three sections of frame 20 + payload + CRC 4, END 20 + 12 + 4. */
	CU_ASSERT_EQUAL(len, 16 + (24 + 5) + (24 + 0) + (24 + 11) + 36);
	CU_ASSERT_EQUAL(memcmp(buf, "\x8ATST\x02\x00\x00\x00\x00\x00\x00\x00", 12), 0);
	CU_ASSERT_EQUAL(crc32(0, buf, 12),
			(uLong)buf[12] | (uLong)buf[13] << 8 | (uLong)buf[14] << 16 |
				(uLong)buf[15] << 24);
	CU_ASSERT_EQUAL(memcmp(buf + 16, "AAAA\0\0\0\0\x05\0\0\0\0\0\0\0", 16), 0);
	CU_ASSERT_EQUAL(memcmp(buf + 36, "alpha", 5), 0);
	/* END: tag 8A 45 4E 44, 12 bytes, section count 3. */
	CU_ASSERT_EQUAL(memcmp(buf + len - 36, "\x8A" "END\x00\x00\x00\x00\x0c", 9), 0);
	CU_ASSERT_EQUAL(buf[len - 16], 3);
	{
		/* The golden file was written by an independent encoder (Python's struct and zlib). */
		char path[4096];
		unsigned char golden[256];
		FILE *f;
		size_t n;
		snprintf(path, sizeof path, "%s/ctests/golden/container/three.tst", cutest_srcdir());
		f = fopen(path, "rb");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		n = fread(golden, 1, sizeof golden, f);
		fclose(f);
		CU_ASSERT_EQUAL(n, len);
		CU_ASSERT_EQUAL(memcmp(golden, buf, len), 0);
	}
	free(buf);
}

static void test_round_trip_buffer(void)
{
	unsigned char *buf;
	size_t len, n;
	mpxkit_container_reader *r;
	uint32_t tag;
	const void *p;
	size_t plen;

	sample(&buf, &len);
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_open_buffer(&r, buf, len, "mem", &fmt, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_container_version(r), 2);
	CU_ASSERT_EQUAL(mpxkit_container_next(r, &tag, &p, &plen, NULL), 1);
	CU_ASSERT_EQUAL(tag, MPXKIT_TAG('A', 'A', 'A', 'A'));
	CU_ASSERT_EQUAL(plen, 5);
	CU_ASSERT_EQUAL(memcmp(p, "alpha", 5), 0);
	CU_ASSERT_EQUAL(mpxkit_container_next(r, &tag, &p, &plen, NULL), 1);
	CU_ASSERT_EQUAL(plen, 0);
	CU_ASSERT_EQUAL(mpxkit_container_next(r, &tag, &p, &plen, NULL), 1);
	CU_ASSERT_EQUAL(memcmp(p, "gamma gamma", 11), 0);
	CU_ASSERT_EQUAL(mpxkit_container_next(r, &tag, &p, &plen, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_container_next(r, &tag, &p, &plen, NULL), 0);
	mpxkit_container_close(r);
	CU_ASSERT_EQUAL(decode(buf, len, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 3);
	free(buf);
}

static void test_file_writer_equals_encoder(void)
{
	const char *path = cutest_scratch_path("f.tst");
	mpxkit_container_writer *w;
	mpxkit_container_reader *r;
	unsigned char *buf, *disk;
	size_t len, n;
	struct stat st;
	FILE *f;

	sample(&buf, &len);
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_create(&w, path, &fmt, 2, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('A', 'A', 'A', 'A'), "alpha", 5, NULL), 0);
	CU_ASSERT_EQUAL(stat(path, &st), -1); /* nothing under the name before commit */
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('B', 'B', 'B', '_'), "", 0, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('c', 'c', '0', '9'), "gamma gamma", 11,
					     NULL),
			0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_commit(w, NULL), 0);
	disk = malloc(len + 1);
	f = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fread(disk, 1, len + 1, f), len);
	fclose(f);
	CU_ASSERT_EQUAL(memcmp(disk, buf, len), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_open(&r, path, &fmt, NULL), 0);
	CU_ASSERT_EQUAL(read_all(r, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 3);
	mpxkit_container_close(r);
	free(disk);
	free(buf);
}

static void test_every_bit_flip_detected(void)
{
	unsigned char *buf;
	size_t len, n, missed = 0;

	sample(&buf, &len);
	for (size_t i = 0; i < len; i++)
		for (int b = 0; b < 8; b++) {
			buf[i] ^= (unsigned char)(1u << b);
			missed += decode(buf, len, &n, NULL) >= 0;
			buf[i] ^= (unsigned char)(1u << b);
		}
	CU_ASSERT_EQUAL(missed, 0);
	free(buf);
}

static void test_every_truncation_and_extension_detected(void)
{
	unsigned char *buf;
	size_t len, n, missed = 0;
	mpxkit_diag d = { 0 };

	sample(&buf, &len);
	for (size_t cut = 0; cut < len; cut++)
		missed += decode(buf, cut, &n, NULL) >= 0;
	CU_ASSERT_EQUAL(missed, 0);
	buf = realloc(buf, len + 1);
	buf[len] = 0;
	CU_ASSERT_EQUAL(decode(buf, len + 1, &n, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "mem: bytes after the end");
	free(buf);
}

static void test_bounds_and_versions(void)
{
	mpxkit_container_format v3 = fmt, small = fmt, other = fmt;
	unsigned char *buf;
	size_t len, n;
	mpxkit_diag d = { 0 };

	v3.min_version = v3.max_version = 3;
	small.max_section = 8;
	other.magic = 0x5858588Au;
	sample(&buf, &len);
	CU_ASSERT_EQUAL(mpxkit_container_open_buffer(&(mpxkit_container_reader *){ NULL }, buf, len,
						     "mem", &v3, &d),
			-MPXKIT_EVERSION);
	CU_ASSERT_STRING_EQUAL(d.msg, "mem: test version 2, this build reads 3 to 3");
	CU_ASSERT_EQUAL(mpxkit_container_open_buffer(&(mpxkit_container_reader *){ NULL }, buf, len,
						     "mem", &other, &d),
			-MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "mem: not a test file (bad magic)");
	{
		mpxkit_container_reader *r;
		CU_ASSERT_EQUAL_FATAL(
		    mpxkit_container_open_buffer(&r, buf, len, "mem", &small, &d), 0);
		CU_ASSERT_EQUAL(read_all(r, &n, &d), -MPXKIT_ERANGE);
		CU_ASSERT_EQUAL(n, 2); /* alpha and the empty one fit in 8 bytes, gamma gamma not */
		mpxkit_container_close(r);
	}
	free(buf);
}

static void test_writer_refusals(void)
{
	mpxkit_container_writer *w;
	mpxkit_diag d = { 0 };
	char big[16] = { 0 };
	mpxkit_container_format tiny = fmt;

	tiny.max_section = 8;
	tiny.max_sections = 1;
	CU_ASSERT_EQUAL(mpxkit_container_create(&w, cutest_scratch_path("x"), &fmt, 3, &d),
			-MPXKIT_EINVAL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_create(&w, cutest_scratch_path("x"), &tiny, 1, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('a', '-', 'b', 'c'), "x", 1, &d),
			-MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('a', 'b', 'c', 'd'), big, sizeof big, &d),
			-MPXKIT_ERANGE);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('a', 'b', 'c', 'd'), big, 8, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_container_put(w, MPXKIT_TAG('a', 'b', 'c', 'd'), big, 8, &d),
			-MPXKIT_ERANGE);
	mpxkit_container_abort(w);
	mpxkit_container_abort(NULL);
	{
		struct stat st;
		CU_ASSERT_EQUAL(stat(cutest_scratch_path("x"), &st), -1);
	}
}

static void test_dev_zero(void)
{
	mpxkit_container_reader *r = NULL;
	mpxkit_diag d = { 0 };

	CU_ASSERT_EQUAL(mpxkit_container_open(&r, "/dev/zero", &fmt, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "/dev/zero: not a test file (bad magic)");
	CU_ASSERT_PTR_NULL(r);
}

static void test_bytes_and_cursor(void)
{
	mpxkit_bytes b = { 0 };
	mpxkit_cursor c;
	static const int64_t svals[] = { 0, -1, 1, INT64_MIN, INT64_MAX, -64, 63 };
	static const uint64_t uvals[] = { 0, 127, 128, 16383, 16384, UINT64_MAX };
	size_t slen;
	const char *s;

	mpxkit_bytes_u8(&b, 0xab);
	mpxkit_bytes_u16(&b, 0x1234);
	mpxkit_bytes_u32(&b, 0xdeadbeef);
	mpxkit_bytes_u64(&b, 0x0102030405060708ull);
	mpxkit_bytes_f64(&b, -2.5);
	for (size_t i = 0; i < sizeof uvals / sizeof uvals[0]; i++)
		mpxkit_bytes_varint(&b, uvals[i]);
	for (size_t i = 0; i < sizeof svals / sizeof svals[0]; i++)
		mpxkit_bytes_svarint(&b, svals[i]);
	mpxkit_bytes_string(&b, "name");
	CU_ASSERT_FALSE_FATAL(b.oom);
	CU_ASSERT_EQUAL(memcmp(b.data, "\xab\x34\x12\xef\xbe\xad\xde\x08\x07\x06\x05\x04\x03\x02\x01", 15),
			0);
	mpxkit_cursor_init(&c, b.data, b.len);
	CU_ASSERT_EQUAL(mpxkit_cursor_u8(&c), 0xab);
	CU_ASSERT_EQUAL(mpxkit_cursor_u16(&c), 0x1234);
	CU_ASSERT_EQUAL(mpxkit_cursor_u32(&c), 0xdeadbeef);
	CU_ASSERT_EQUAL(mpxkit_cursor_u64(&c), 0x0102030405060708ull);
	CU_ASSERT_EQUAL(mpxkit_cursor_f64(&c), -2.5);
	for (size_t i = 0; i < sizeof uvals / sizeof uvals[0]; i++)
		CU_ASSERT_EQUAL(mpxkit_cursor_varint(&c), uvals[i]);
	for (size_t i = 0; i < sizeof svals / sizeof svals[0]; i++)
		CU_ASSERT_EQUAL(mpxkit_cursor_svarint(&c), svals[i]);
	s = mpxkit_cursor_string(&c, 16, &slen);
	CU_ASSERT_EQUAL(slen, 4);
	CU_ASSERT_EQUAL(memcmp(s, "name", 4), 0);
	CU_ASSERT_EQUAL(mpxkit_cursor_left(&c), 0);
	CU_ASSERT_EQUAL(c.error, 0);
	CU_ASSERT_EQUAL(mpxkit_cursor_u8(&c), 0);
	CU_ASSERT_EQUAL(c.error, -MPXKIT_ETRUNC);
	mpxkit_bytes_free(&b);

	/* Non-canonical varints: a padded zero byte, an 11-byte run, a 10th byte above 1. */
	mpxkit_cursor_init(&c, "\x80\x00", 2);
	mpxkit_cursor_varint(&c);
	CU_ASSERT_EQUAL(c.error, -MPXKIT_EFORMAT);
	mpxkit_cursor_init(&c, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
	mpxkit_cursor_varint(&c);
	CU_ASSERT_EQUAL(c.error, -MPXKIT_EFORMAT);
	/* A string longer than its bound, and one with a NUL. */
	mpxkit_cursor_init(&c, "\x05hello", 6);
	CU_ASSERT_PTR_NULL(mpxkit_cursor_string(&c, 4, &slen));
	CU_ASSERT_EQUAL(c.error, -MPXKIT_EFORMAT);
	mpxkit_cursor_init(&c, "\x02h\0", 3);
	CU_ASSERT_PTR_NULL(mpxkit_cursor_string(&c, 4, &slen));
	CU_ASSERT_EQUAL(c.error, -MPXKIT_EFORMAT);
}

static const cutest_case container_cases[] = {
	{ "layout by hand", test_layout_by_hand },
	{ "round trip through a buffer", test_round_trip_buffer },
	{ "the file writer writes what the encoder does", test_file_writer_equals_encoder },
	{ "every flipped bit is detected", test_every_bit_flip_detected },
	{ "every truncation and a trailing byte are detected",
	  test_every_truncation_and_extension_detected },
	{ "bounds, magic and versions", test_bounds_and_versions },
	{ "writer refusals", test_writer_refusals },
	{ "/dev/zero", test_dev_zero },
	{ "bytes and cursor", test_bytes_and_cursor },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = {
		{ "container", container_cases, setup, cutest_scratch_remove },
		{ NULL, NULL, NULL, NULL },
	};
	return cutest_run("test_container", suites);
}
