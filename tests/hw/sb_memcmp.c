// SPDX-License-Identifier: MIT
/*
 * sb_memcmp EXPECT OUT: is the memory the RTL wrote (OUT: the testbench's
 * "M beat_address wstrb wdata" lines, hw/tb/tb_sideband.v) byte-identical
 * to what the software ERNIC wrote (EXPECT: "E address length bytes"
 * lines, model/axi_trace.c)? Both are applied in order to an empty
 * memory; the final images must hold the same bytes at the same
 * addresses. Prints a summary; exit 0 when identical, 1 otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wbyte {
	uint64_t addr;
	uint64_t seq;
	uint8_t v;
};

struct image {
	struct wbyte *b;
	size_t n, cap;
};

static void put(struct image *im, uint64_t addr, uint8_t v)
{
	if (im->n == im->cap) {
		im->cap = im->cap ? im->cap * 2 : 65536;
		im->b = realloc(im->b, im->cap * sizeof(*im->b));
		if (!im->b) {
			perror("sb_memcmp");
			exit(2);
		}
	}
	im->b[im->n] = (struct wbyte){ addr, im->n, v };
	im->n++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int cmp(const void *a, const void *b)
{
	const struct wbyte *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort and keep the last write of each address. */
static void settle(struct image *im)
{
	size_t o = 0;

	qsort(im->b, im->n, sizeof(*im->b), cmp);
	for (size_t i = 0; i < im->n; i++) {
		if (o && im->b[o - 1].addr == im->b[i].addr)
			o--;
		im->b[o++] = im->b[i];
	}
	im->n = o;
}

static FILE *open_or_die(const char *p)
{
	FILE *f = fopen(p, "r");

	if (!f) {
		fprintf(stderr, "sb_memcmp: %s: %s\n", p, strerror(errno));
		exit(2);
	}
	return f;
}

static char line[1 << 18];

/* EXPECT: E addr len hexbytes (bytes in address order). */
static unsigned long read_expect(const char *p, struct image *im,
				 unsigned long kinds[3])
{
	FILE *f = open_or_die(p);
	unsigned long n = 0;

	while (fgets(line, sizeof(line), f)) {
		char *s = line, *e;
		uint64_t addr, len;

		if (line[0] != 'E')
			continue;
		addr = strtoull(s + 2, &e, 16);
		len = strtoull(e, &e, 16);
		while (*e == ' ')
			e++;
		for (uint64_t k = 0; k < len; k++) {
			int hi = hexval(e[2 * k]), lo;

			lo = hi < 0 ? -1 : hexval(e[2 * k + 1]);
			if (lo < 0) {
				fprintf(stderr, "sb_memcmp: %s: bad line %lu\n", p, n + 1);
				exit(2);
			}
			put(im, addr + k, (uint8_t)(hi << 4 | lo));
		}
		kinds[len == 4 ? 0 : len == 16 ? 1 : 2]++;
		n++;
	}
	fclose(f);
	return n;
}

/* OUT: M beat_address(16 hex) wstrb(16 hex) wdata(128 hex, lane 63 first). */
static unsigned long read_out(const char *p, struct image *im)
{
	FILE *f = open_or_die(p);
	unsigned long n = 0;

	while (fgets(line, sizeof(line), f)) {
		char *e;
		uint64_t addr, strb;

		if (line[0] != 'M')
			continue;
		addr = strtoull(line + 2, &e, 16);
		strb = strtoull(e, &e, 16);
		while (*e == ' ')
			e++;
		if (strlen(e) < 128) {
			fprintf(stderr, "sb_memcmp: %s: short beat %lu\n", p, n + 1);
			exit(2);
		}
		for (int lane = 0; lane < 64; lane++) {
			const char *h = e + 2 * (63 - lane);

			if (strb >> lane & 1)
				put(im, addr + (uint64_t)lane,
				    (uint8_t)(hexval(h[0]) << 4 | hexval(h[1])));
		}
		n++;
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct image ex = { 0 }, out = { 0 };
	unsigned long kinds[3] = { 0 }, ne, no, bad = 0;
	size_t i = 0, j = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sb_memcmp EXPECT OUT\n");
		return 2;
	}
	ne = read_expect(argv[1], &ex, kinds);
	no = read_out(argv[2], &out);
	settle(&ex);
	settle(&out);
	while (i < ex.n || j < out.n) {
		const struct wbyte *x = i < ex.n ? &ex.b[i] : NULL;
		const struct wbyte *y = j < out.n ? &out.b[j] : NULL;

		if (x && y && x->addr == y->addr) {
			if (x->v != y->v && bad++ < 10)
				printf("  differ at %#" PRIx64 ": model %02x, RTL %02x\n",
				       x->addr, x->v, y->v);
			i++;
			j++;
		} else if (x && (!y || x->addr < y->addr)) {
			if (bad++ < 10)
				printf("  %#" PRIx64 ": written by the model only\n",
				       x->addr);
			i++;
		} else {
			if (bad++ < 10)
				printf("  %#" PRIx64 ": written by the RTL only\n",
				       y->addr);
			j++;
		}
	}
	printf("sb_memcmp: model writes %lu (4-byte %lu, 16-byte %lu, other %lu), RTL beats %lu, bytes %zu / %zu: %s",
	       ne, kinds[0], kinds[1], kinds[2], no, ex.n, out.n,
	       bad ? "DIFFERENT" : "identical");
	if (bad)
		printf(" (%lu bytes)", bad);
	printf("\n");
	free(ex.b);
	free(out.b);
	return bad ? 1 : 0;
}
