/* SPDX-License-Identifier: BSD-3-Clause */
/* Counts what a screenshot shows: pixels off the background colour and strongly coloured ones. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

/*
 * usage: png_pixels FILE.png [X,Y ...]
 * prints "WIDTH HEIGHT INKED COLOURED": pixels that differ from the corner
 * pixel's colour (the page background) by more than a faint anti-aliasing
 * step, and pixels whose channels spread by 64 or more (chart colours; text
 * and grid lines are grey).  With points, prints "X Y #rrggbb" for each
 * instead: the colour the screenshot shows there (a legend swatch, a cell).
 * Reads 8-bit, non-interlaced grey, grey+alpha, RGB and RGBA, which is what
 * browsers write for screenshots (PNG spec, ISO 15948: chunks, zlib stream,
 * per-row filters).  Exit 0, 1 usage, or 2 with one line.
 */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int fail(const char *path, const char *why)
{
	fprintf(stderr, "png_pixels: %s: %s\n", path, why);
	return 2;
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the filter of each row in place; raw holds (1 + stride) bytes per row. */
static int unfilter(unsigned char *raw, size_t height, size_t stride, size_t bpp)
{
	unsigned char *prev = NULL;

	for (size_t y = 0; y < height; y++) {
		unsigned char *row = raw + y * (stride + 1), type = row[0], *cur = row + 1;
		for (size_t i = 0; i < stride; i++) {
			int a = i >= bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0;
			int c = prev && i >= bpp ? prev[i - bpp] : 0;
			switch (type) {
			case 0:
				break;
			case 1:
				cur[i] = (unsigned char)(cur[i] + a);
				break;
			case 2:
				cur[i] = (unsigned char)(cur[i] + b);
				break;
			case 3:
				cur[i] = (unsigned char)(cur[i] + (a + b) / 2);
				break;
			case 4:
				cur[i] = (unsigned char)(cur[i] + paeth(a, b, c));
				break;
			default:
				return -1;
			}
		}
		prev = cur;
	}
	return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (f == NULL)
		return NULL;
	for (;;) {
		if (*len == cap) {
			unsigned char *grown =
			    cap < (256u << 20) ? realloc(buf, cap ? 2 * cap : 65536) : NULL;
			if (grown == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
			cap = cap ? 2 * cap : 65536;
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	return buf;
}

/* The colour at each "X,Y" of points (rows of 1 + stride bytes, unfiltered): 0, or 1 for a bad
 * point. */
static int print_points(const unsigned char *raw, size_t width, size_t height, size_t channels,
			char **points, int n)
{
	size_t stride = width * channels;

	for (int i = 0; i < n; i++) {
		unsigned long x, y;
		char *end;
		x = strtoul(points[i], &end, 10);
		if (*end != ',' || end == points[i])
			goto bad;
		y = strtoul(end + 1, &end, 10);
		if (*end != '\0' || x >= width || y >= height)
			goto bad;
		const unsigned char *p = raw + y * (stride + 1) + 1 + x * channels;
		if (channels >= 3)
			printf("%lu %lu #%02x%02x%02x\n", x, y, p[0], p[1], p[2]);
		else
			printf("%lu %lu #%02x%02x%02x\n", x, y, p[0], p[0], p[0]);
		continue;
	bad:
		fprintf(stderr, "png_pixels: '%s' is not a point X,Y inside the %zu x %zu image\n",
			points[i], width, height);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char *file, *idat = NULL, *raw = NULL;
	size_t len, idat_len = 0, pos = 8, width = 0, height = 0, channels = 0;
	unsigned long inked = 0, coloured = 0;
	int rc = 2;

	if (argc < 2) {
		fputs("usage: png_pixels FILE.png [X,Y ...]\n", stderr);
		return 1;
	}
	if ((file = slurp(argv[1], &len)) == NULL)
		return fail(argv[1], "cannot read");
	if (len < 8 || memcmp(file, sig, 8) != 0) {
		rc = fail(argv[1], "not a PNG file");
		goto out;
	}
	while (pos + 12 <= len) {
		size_t n = be32(file + pos);
		const unsigned char *type = file + pos + 4, *data = file + pos + 8;
		if (n > len - pos - 12) {
			rc = fail(argv[1], "truncated chunk");
			goto out;
		}
		if (memcmp(type, "IHDR", 4) == 0 && n == 13) {
			static const size_t per_type[7] = {1, 0, 3, 0, 2, 0, 4};
			width = be32(data);
			height = be32(data + 4);
			if (data[8] != 8 || data[9] > 6 || per_type[data[9]] == 0 ||
			    data[12] != 0 || width == 0 || height == 0 || width > 20000 ||
			    height > 20000) {
				rc =
				    fail(argv[1], "only 8-bit, non-interlaced, non-palette images");
				goto out;
			}
			channels = per_type[data[9]];
		} else if (memcmp(type, "IDAT", 4) == 0) {
			unsigned char *grown = realloc(idat, idat_len + n + 1);
			if (grown == NULL) {
				rc = fail(argv[1], "out of memory");
				goto out;
			}
			idat = grown;
			memcpy(idat + idat_len, data, n);
			idat_len += n;
		}
		pos += n + 12;
	}
	if (channels == 0 || idat == NULL) {
		rc = fail(argv[1], "no IHDR or IDAT");
		goto out;
	}
	{
		size_t stride = width * channels;
		uLongf raw_len = (uLongf)((stride + 1) * height);
		const unsigned char *bg;
		raw = malloc(raw_len);
		if (raw == NULL || uncompress(raw, &raw_len, idat, idat_len) != Z_OK ||
		    raw_len != (stride + 1) * height ||
		    unfilter(raw, height, stride, channels) < 0) {
			rc = fail(argv[1], "bad image data");
			goto out;
		}
		if (argc > 2) {
			rc = print_points(raw, width, height, channels, argv + 2, argc - 2);
			goto out;
		}
		bg = raw + 1;
		for (size_t y = 0; y < height; y++)
			for (size_t x = 0; x < width; x++) {
				const unsigned char *p = raw + y * (stride + 1) + 1 + x * channels;
				int lo = 255, hi = 0, diff = 0;
				for (size_t c = 0; c < (channels >= 3 ? 3 : 1); c++) {
					lo = p[c] < lo ? p[c] : lo;
					hi = p[c] > hi ? p[c] : hi;
					diff += abs(p[c] - bg[c]);
				}
				inked += diff > 24;
				coloured += hi - lo >= 64;
			}
	}
	printf("%zu %zu %lu %lu\n", width, height, inked, coloured);
	rc = 0;
out:
	free(file);
	free(idat);
	free(raw);
	return rc;
}
