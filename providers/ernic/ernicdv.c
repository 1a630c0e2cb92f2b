// SPDX-License-Identifier: MIT
/* ernicdv: register access for tools and tests. */
#include <errno.h>

#include "ernic.h"
#include "ernicdv.h"



bool ernicdv_is_ernic_device(struct ibv_device *device)
{
	return device &&
	       ((struct verbs_device *)device)->ops == &ernic_dev_ops;
}

static int check(struct ibv_context *context, uint32_t offset)
{
	if (!context || !ernicdv_is_ernic_device(context->device))
		return EINVAL;
	if (offset % 4 || offset >= ERNIC_REG_SPACE_SIZE)
		return EINVAL;
	if (!ctx_dev(context)->acc)
		return ENODEV;
	return 0;
}

int ernicdv_reg_read(struct ibv_context *context, uint32_t offset,
		     uint32_t *value)
{
	int ret = check(context, offset);

	if (ret)
		return ret;
	*value = ernic_rd(ctx_dev(context)->acc, offset);
	return 0;
}

int ernicdv_reg_write(struct ibv_context *context, uint32_t offset,
		      uint32_t value)
{
	int ret = check(context, offset);

	if (ret)
		return ret;
	ernic_wr(ctx_dev(context)->acc, offset, value);
	return 0;
}
