// SPDX-License-Identifier: MIT
/*
 * Device access layer entry point: picks the backend the device
 * configuration names.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "access_uio.h"
#include "access_vfio.h"
#include "ernic_access.h"
#include "ernic_conf.h"
#include "ernic_sw.h"

int ernic_access_open(const struct ernic_conf *conf,
		      struct ernic_access **out, char *err, size_t errlen)
{
	/* No error buffer: snprintf(NULL, 0, ...) writes nothing. */
	if (!err)
		errlen = 0;
	if (!conf || !out) {
		snprintf(err, errlen, "invalid argument");
		return EINVAL;
	}
	*out = NULL;
	switch (conf->backend) {
	case ERNIC_BACKEND_SW:
		/* libernic-sw.so, loaded on first use */
		return ernic_access_sw_open(conf, out, err, errlen);
	case ERNIC_BACKEND_UIO:
		return ernic_access_uio_open(conf, out, err, errlen);
	case ERNIC_BACKEND_VFIO:
		return ernic_access_vfio_open(conf, out, err, errlen);
	}
	snprintf(err, errlen, "backend %d not supported", (int)conf->backend);
	return EOPNOTSUPP;
}

int ernic_access_attach(const struct ernic_conf *conf,
			const struct ernic_access_share *share,
			struct ernic_access **out, char *err, size_t errlen)
{
	if (!err)
		errlen = 0;
	if (!conf || !share || !out) {
		snprintf(err, errlen, "invalid argument");
		return EINVAL;
	}
	*out = NULL;
	if (conf->backend == ERNIC_BACKEND_VFIO)
		return ernic_access_vfio_attach(conf, share, out, err, errlen);
	close(share->device_fd);
	close(share->region_fd);
	snprintf(err, errlen, "a %s device is opened by each process, not "
		 "attached to", ernic_backend_name(conf->backend));
	return EOPNOTSUPP;
}
