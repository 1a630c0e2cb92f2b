// SPDX-License-Identifier: MIT
/*
 * libernic-preload.so leaves other devices alone: run with it in
 * LD_PRELOAD (ctest does) and a stand-in libibverbs, a context whose
 * device belongs to another provider (here: ops in this program) reaches
 * the next ibv_create_comp_channel() unchanged, and so does a NULL one.
 * The ERNIC side is tested with unmodified programs (app_channels).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ernic-pabi.h"

extern int fake_create_calls;
extern struct ibv_comp_channel fake_channel;

static const struct verbs_device_ops other_ops = { .name = "other" };

static void test_symbol_is_the_preload(void **state)
{
	void *sym = dlsym(RTLD_DEFAULT, "ibv_create_comp_channel");
	Dl_info info;

	(void)state;
	assert_non_null(sym);
	assert_true(dladdr(sym, &info));
	/* The test means nothing unless the preload is in the way. */
	assert_non_null(strstr(info.dli_fname, "libernic-preload.so"));
}

static void test_other_device_passes_through(void **state)
{
	struct verbs_device vdev = { .ops = &other_ops };
	struct ibv_context ctx = { .device = &vdev.device };
	int before = fake_create_calls;

	(void)state;
	assert_ptr_equal(ibv_create_comp_channel(&ctx), &fake_channel);
	assert_int_equal(fake_create_calls, before + 1);
	assert_ptr_equal(fake_channel.context, &ctx);
}

static void test_null_passes_through(void **state)
{
	int before = fake_create_calls;

	(void)state;
	assert_ptr_equal(ibv_create_comp_channel(NULL), &fake_channel);
	assert_int_equal(fake_create_calls, before + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbol_is_the_preload),
		cmocka_unit_test(test_other_device_passes_through),
		cmocka_unit_test(test_null_passes_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
