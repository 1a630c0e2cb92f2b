// SPDX-License-Identifier: MIT
/*
 * Append a "queue to N" rule to an existing nftables chain; libnftnl
 * builds the messages, libmnl sends them. nft(8) writes that rule as
 * the nft_queue expression, which some kernels lack (CONFIG_NFT_QUEUE=n)
 * although they have NFQUEUE itself; there the x_tables NFQUEUE target
 * works through nft_compat, as iptables-nft uses it, but nft(8) cannot
 * write that expression. So we try nft_queue and fall back to the compat
 * target.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "faultq.h"

/*
 * A batch of three short messages (names are checked below), well
 * under the limit; libmnl wants the buffer twice the limit.
 */
#define BATCH_LIMIT 4096

static struct nftnl_expr *queue_expr(uint16_t queue, int bypass)
{
	struct nftnl_expr *e = nftnl_expr_alloc("queue");

	if (!e)
		return NULL;
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_NUM, queue);
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_TOTAL, 1);
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_FLAGS,
			   bypass ? NFT_QUEUE_FLAG_BYPASS : 0);
	return e;
}

/* NFQUEUE revision 3, whose info has the flags (bypass). */
static struct nftnl_expr *compat_expr(uint16_t queue, int bypass)
{
	struct nftnl_expr *e = nftnl_expr_alloc("target");
	/* the kernel wants the info padded to XT_ALIGN; e then owns it */
	size_t len = XT_ALIGN(sizeof(struct xt_NFQ_info_v3));
	struct xt_NFQ_info_v3 *info = calloc(1, len);

	if (!e || !info) {
		free(info);
		if (e)
			nftnl_expr_free(e);
		return NULL;
	}
	info->queuenum = queue;
	info->queues_total = 1;
	info->flags = bypass ? NFQ_FLAG_BYPASS : 0;
	nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
	nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
	nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, (uint32_t)len);
	return e;
}

/*
 * Append a rule of the one expression e (the rule takes it) as one
 * batch: BEGIN, NEWRULE (acked), END. 0 or -errno, the kernel's for a
 * refusal.
 */
static int add_rule(struct mnl_socket *nl, uint16_t family, const char *table,
		    const char *chain, struct nftnl_expr *e, uint32_t seq)
{
	static char buf[2 * BATCH_LIMIT];
	struct mnl_nlmsg_batch *b;
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nlmsghdr *h;
	ssize_t n;
	int rc;

	if (!r || !e || nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table) ||
	    nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain)) {
		if (e)
			nftnl_expr_free(e);
		if (r)
			nftnl_rule_free(r);
		return -ENOMEM;
	}
	nftnl_rule_add_expr(r, e);

	b = mnl_nlmsg_batch_start(buf, BATCH_LIMIT);
	if (!b) {
		nftnl_rule_free(r);
		return -ENOMEM;
	}
	nftnl_batch_begin(mnl_nlmsg_batch_current(b), seq);
	mnl_nlmsg_batch_next(b);
	h = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(b),
				       NFT_MSG_NEWRULE, family,
				       NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK,
				       seq + 1);
	nftnl_rule_nlmsg_build_payload(h, r);
	nftnl_rule_free(r);
	mnl_nlmsg_batch_next(b);
	nftnl_batch_end(mnl_nlmsg_batch_current(b), seq + 2);
	mnl_nlmsg_batch_next(b);
	n = mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b),
			      mnl_nlmsg_batch_size(b));
	mnl_nlmsg_batch_stop(b);
	if (n < 0)
		return -errno;

	/*
	 * Only NEWRULE asks for an ack; an error for any message of the
	 * batch fails it (seq 0: any sequence number).
	 */
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		rc = mnl_cb_run(buf, (size_t)n, 0, mnl_socket_get_portid(nl),
				NULL, NULL);
		if (rc < 0)
			return -errno;
		if (rc == MNL_CB_STOP)
			return 0;
	}
}

static int family_of(const char *s)
{
	static const struct {
		const char *name;
		int family;
	} f[] = {
		{ "inet", NFPROTO_INET }, { "ip", NFPROTO_IPV4 },
		{ "ip6", NFPROTO_IPV6 }, { "bridge", NFPROTO_BRIDGE },
		{ "netdev", NFPROTO_NETDEV },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(s, f[i].name))
			return f[i].family;
	return -1;
}

int fq_add_queue_rule(const char *family, const char *table,
		      const char *chain, uint16_t queue, int bypass,
		      const char **how, char *err, size_t errlen)
{
	struct mnl_socket *nl;
	int fam = family_of(family), rc, native = 0;
	uint32_t seq = (uint32_t)getpid() << 8;
	struct timeval tmo = { .tv_sec = 5 };	/* no answer: an error */

	if (fam < 0) {
		snprintf(err, errlen, "unknown nftables family '%s'", family);
		return -1;
	}
	/* the kernel's limit; it also keeps the batch within its buffer */
	if (strlen(table) >= NFT_NAME_MAXLEN ||
	    strlen(chain) >= NFT_NAME_MAXLEN) {
		snprintf(err, errlen,
			 "table or chain name longer than %d bytes",
			 NFT_NAME_MAXLEN - 1);
		return -1;
	}
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) ||
	    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tmo,
		       sizeof(tmo))) {
		snprintf(err, errlen, "netlink socket: %s", strerror(errno));
		if (nl)
			mnl_socket_close(nl);
		return -1;
	}
	*how = "nft_queue";
	rc = add_rule(nl, (uint16_t)fam, table, chain,
		      queue_expr(queue, bypass), seq);
	/* no such expression type: the kernel has no nft_queue */
	if (rc == -ENOENT || rc == -EOPNOTSUPP) {
		native = rc;
		*how = "xt NFQUEUE via nft_compat";
		rc = add_rule(nl, (uint16_t)fam, table, chain,
			      compat_expr(queue, bypass), seq + 16);
	}
	mnl_socket_close(nl);
	if (rc && native)
		/* a missing table or chain is ENOENT for both too */
		snprintf(err, errlen,
			 "cannot add a queue rule to %s %s %s: nft_queue: %s; %s: %s%s",
			 family, table, chain, strerror(-native), *how,
			 strerror(-rc), rc == -ENOENT && native == -ENOENT ?
			 " (no such table or chain, or neither expression)" :
			 "");
	else if (rc)
		snprintf(err, errlen,
			 "cannot add a queue rule to %s %s %s (%s): %s",
			 family, table, chain, *how, strerror(-rc));
	return rc ? -1 : 0;
}
