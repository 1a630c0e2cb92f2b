// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the ernic.conf parser (common/ernic_conf.c), which
 * reads files that ernicctl writes and a careless or hostile user may
 * edit. Oracles: no crash or undefined behaviour (ASan, UBSan); a
 * refusal always says why; and what loads saves as a file that loads
 * back to the same configuration, saving the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ernic_conf.h"

static int mem_file(const char *name, const uint8_t *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	return fd;
}

static void path_of(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* Where saves go: a directory of our own on tmpfs (save renames a
 * temporary file into place, so it needs a real directory). */
static char save_dir[] = "/dev/shm/ernic-fuzz-conf.XXXXXX";
static char save_file[64];

static void save_cleanup(void)
{
	unlink(save_file);
	rmdir(save_dir);
}

static const char *save_path(void)
{
	if (!save_file[0]) {
		if (!mkdtemp(save_dir))
			abort();
		snprintf(save_file, sizeof(save_file), "%s/c.conf", save_dir);
		atexit(save_cleanup);
	}
	return save_file;
}

static size_t load_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		abort();
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char a[8192], b[8192];
	const char *out = save_path();
	char path[64], err[256] = "";
	struct ernic_conf c, c2;
	size_t na, nb;
	int in, rc;

	in = mem_file("in", data, size);
	path_of(in, path, sizeof(path));
	rc = ernic_conf_load(path, &c, err, sizeof(err));
	close(in);
	if (rc) {
		if (!err[0])
			abort();	/* a refusal must say why */
		return 0;
	}
	/* round trip: save, load, save again: the same text */
	if (ernic_conf_save(out, &c, err, sizeof(err)))
		abort();
	na = load_text(out, a, sizeof(a));
	if (ernic_conf_load(out, &c2, err, sizeof(err)))
		abort();
	if (ernic_conf_save(out, &c2, err, sizeof(err)))
		abort();
	nb = load_text(out, b, sizeof(b));
	if (na != nb || memcmp(a, b, na))
		abort();
	return 0;
}
