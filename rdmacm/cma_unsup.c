// SPDX-License-Identifier: MIT
/*
 * What this librdmacm does not do, each with its reason: ERNIC has RC
 * QPs only (no UD, so no multicast and no SIDR), no SRQ, and no ECE
 * vendor options; rsockets, librdmacm's socket layer, is not provided.
 * The symbols are here so every program linked against Debian's
 * librdmacm.so.1 loads; a call fails with an errno and says why once.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/select.h>

#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "cma.h"

static int refuse(const char *what, const char *why, int err)
{
	cma_err("%s: %s", what, why);
	errno = err;
	return -1;
}

#define NO_MCAST "ERNIC has no UD QPs, so no multicast"
#define NO_SRQ "ERNIC has no shared receive queues"
#define NO_RS "rsockets is not part of the ERNIC librdmacm"

CMA_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				   void *context)
{
	(void)id, (void)addr, (void)context;
	return refuse("rdma_join_multicast", NO_MCAST, ENOSYS);
}

CMA_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *attr,
				      void *context)
{
	(void)id, (void)attr, (void)context;
	return refuse("rdma_join_multicast_ex", NO_MCAST, ENOSYS);
}

CMA_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return refuse("rdma_leave_multicast", NO_MCAST, ENOSYS);
}

CMA_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	return refuse("rdma_create_srq", NO_SRQ, EOPNOTSUPP);
}

CMA_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				  struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	return refuse("rdma_create_srq_ex", NO_SRQ, EOPNOTSUPP);
}

CMA_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;	/* rdma_create_srq never made one */
}

CMA_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return refuse("rdma_set_local_ece", "ERNIC has no ECE options",
		      EOPNOTSUPP);
}

CMA_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || !ece)
		return cma_ret(EINVAL);
	memset(ece, 0, sizeof(*ece));	/* none offered */
	return 0;
}

/* ---- rsockets ---- */

#define RS_REFUSE(name) refuse(name, NO_RS, ENOSYS)

CMA_EXPORT int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	return RS_REFUSE("rsocket");
}
CMA_EXPORT int rbind(int s, const struct sockaddr *a, socklen_t l)
{
	(void)s, (void)a, (void)l;
	return RS_REFUSE("rbind");
}
CMA_EXPORT int rlisten(int s, int backlog)
{
	(void)s, (void)backlog;
	return RS_REFUSE("rlisten");
}
CMA_EXPORT int raccept(int s, struct sockaddr *a, socklen_t *l)
{
	(void)s, (void)a, (void)l;
	return RS_REFUSE("raccept");
}
CMA_EXPORT int rconnect(int s, const struct sockaddr *a, socklen_t l)
{
	(void)s, (void)a, (void)l;
	return RS_REFUSE("rconnect");
}
CMA_EXPORT int rshutdown(int s, int how)
{
	(void)s, (void)how;
	return RS_REFUSE("rshutdown");
}
CMA_EXPORT int rclose(int s)
{
	(void)s;
	return RS_REFUSE("rclose");
}
CMA_EXPORT ssize_t rrecv(int s, void *b, size_t n, int f)
{
	(void)s, (void)b, (void)n, (void)f;
	return RS_REFUSE("rrecv");
}
CMA_EXPORT ssize_t rrecvfrom(int s, void *b, size_t n, int f,
			     struct sockaddr *a, socklen_t *l)
{
	(void)s, (void)b, (void)n, (void)f, (void)a, (void)l;
	return RS_REFUSE("rrecvfrom");
}
CMA_EXPORT ssize_t rrecvmsg(int s, struct msghdr *m, int f)
{
	(void)s, (void)m, (void)f;
	return RS_REFUSE("rrecvmsg");
}
CMA_EXPORT ssize_t rsend(int s, const void *b, size_t n, int f)
{
	(void)s, (void)b, (void)n, (void)f;
	return RS_REFUSE("rsend");
}
CMA_EXPORT ssize_t rsendto(int s, const void *b, size_t n, int f,
			   const struct sockaddr *a, socklen_t l)
{
	(void)s, (void)b, (void)n, (void)f, (void)a, (void)l;
	return RS_REFUSE("rsendto");
}
CMA_EXPORT ssize_t rsendmsg(int s, const struct msghdr *m, int f)
{
	(void)s, (void)m, (void)f;
	return RS_REFUSE("rsendmsg");
}
CMA_EXPORT ssize_t rread(int s, void *b, size_t n)
{
	(void)s, (void)b, (void)n;
	return RS_REFUSE("rread");
}
CMA_EXPORT ssize_t rreadv(int s, const struct iovec *v, int n)
{
	(void)s, (void)v, (void)n;
	return RS_REFUSE("rreadv");
}
CMA_EXPORT ssize_t rwrite(int s, const void *b, size_t n)
{
	(void)s, (void)b, (void)n;
	return RS_REFUSE("rwrite");
}
CMA_EXPORT ssize_t rwritev(int s, const struct iovec *v, int n)
{
	(void)s, (void)v, (void)n;
	return RS_REFUSE("rwritev");
}
CMA_EXPORT int rpoll(struct pollfd *fds, nfds_t n, int timeout)
{
	(void)fds, (void)n, (void)timeout;
	return RS_REFUSE("rpoll");
}
CMA_EXPORT int rselect(int n, fd_set *r, fd_set *w, fd_set *e,
		       struct timeval *t)
{
	(void)n, (void)r, (void)w, (void)e, (void)t;
	return RS_REFUSE("rselect");
}
CMA_EXPORT int rgetpeername(int s, struct sockaddr *a, socklen_t *l)
{
	(void)s, (void)a, (void)l;
	return RS_REFUSE("rgetpeername");
}
CMA_EXPORT int rgetsockname(int s, struct sockaddr *a, socklen_t *l)
{
	(void)s, (void)a, (void)l;
	return RS_REFUSE("rgetsockname");
}
CMA_EXPORT int rsetsockopt(int s, int level, int name, const void *v,
			   socklen_t l)
{
	(void)s, (void)level, (void)name, (void)v, (void)l;
	return RS_REFUSE("rsetsockopt");
}
CMA_EXPORT int rgetsockopt(int s, int level, int name, void *v, socklen_t *l)
{
	(void)s, (void)level, (void)name, (void)v, (void)l;
	return RS_REFUSE("rgetsockopt");
}
CMA_EXPORT int rfcntl(int s, int cmd, ...)
{
	(void)s, (void)cmd;
	return RS_REFUSE("rfcntl");
}
CMA_EXPORT off_t riomap(int s, void *b, size_t n, int prot, int flags,
			off_t offset)
{
	(void)s, (void)b, (void)n, (void)prot, (void)flags, (void)offset;
	return RS_REFUSE("riomap");
}
CMA_EXPORT int riounmap(int s, void *b, size_t n)
{
	(void)s, (void)b, (void)n;
	return RS_REFUSE("riounmap");
}
CMA_EXPORT size_t riowrite(int s, const void *b, size_t n, off_t offset,
			   int flags)
{
	(void)s, (void)b, (void)n, (void)offset, (void)flags;
	RS_REFUSE("riowrite");
	return 0;
}
