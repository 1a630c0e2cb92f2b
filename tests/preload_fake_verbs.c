// SPDX-License-Identifier: MIT
/*
 * A stand-in for libibverbs' ibv_create_comp_channel() (test_preload):
 * counts its calls and returns a marker, so the test sees whether
 * libernic-preload.so handed a context on.
 */
#include <infiniband/verbs.h>

int fake_create_calls;
struct ibv_comp_channel fake_channel;

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	fake_create_calls++;
	fake_channel.context = context;
	return &fake_channel;
}
