/* SPDX-License-Identifier: MIT */
/*
 * The in-process ERNIC model backend of the device access layer.
 */
#ifndef ERNIC_ACCESS_MODEL_H
#define ERNIC_ACCESS_MODEL_H

#include <stddef.h>

struct ernic_access;
struct ernic_conf;
struct ernic_model;

/* Backend constructor used by ernic_access_open(). Returns 0 or errno
 * with a one-line reason in err. */
int ernic_access_model_open(const struct ernic_conf *conf,
			    struct ernic_access **out, char *err,
			    size_t errlen);

/* The model behind a software-backend handle, NULL for other backends:
 * lets tests and the queue engine drive the hardware side. */
struct ernic_model *ernic_access_model(struct ernic_access *acc);

#endif
