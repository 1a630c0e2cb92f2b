// SPDX-License-Identifier: MIT
/*
 * The driver's part of ECN (PG332 RX path): "On reception of ECN marked
 * packet an interrupt is generated to notify driver. Driver generates a
 * CNP packet for that QP and schedule it through QP1 instead of QPN."
 * The interrupt thread reads CNPSCHDSTSnREG (which QPs) before it clears
 * INTSTS[8], then sends one CNP per QP named: to the QP's peer (its
 * destination registers), to the peer's QP number, from QP1. Several
 * marked packets between two interrupts make one CNP, as a notification
 * point paces its CNPs. A CNP that finds QP1's SQ full is not sent: it
 * is advice, and the next marked packet asks again.
 */
#include <string.h>
#include <sys/socket.h>

#include "ernic.h"
#include "ernic_mad_frame.h"
#include "ernic_net.h"

void ernic_cnp_pending(struct ernic_dev *dev,
		       uint32_t words[ERNIC_CNPSCHD_WORDS])
{
	const uint32_t n = ERNIC_CNPSCHD_WORD(dev->conf.c_num_qp);

	for (uint32_t w = 1; w <= ERNIC_CNPSCHD_WORDS; w++)
		words[w - 1] = w <= n ? ernic_rd(dev->acc,
						 ERNIC_CNPSCHDSTSREG(w)) : 0;
}

/* The CNP's destination: QP i's peer, from its registers. */
static void cnp_peer(struct ernic_access *acc, uint32_t i,
		     struct ernic_mad_peer *dst)
{
	const uint32_t conf = ernic_rd(acc, ERNIC_QP(i, ERNIC_QPCONF));
	const uint32_t adv = ernic_rd(acc, ERNIC_QP(i, ERNIC_QPADVCONF));
	const bool v6 = conf & ERNIC_QPCONF_IPV6;
	struct ernic_ip ip = { .family = v6 ? AF_INET6 : AF_INET };
	uint32_t word[4];

	memset(dst, 0, sizeof(*dst));
	for (int w = 0; w < 4; w++)
		word[w] = ernic_rd(acc, ERNIC_QP(i, ERNIC_IPDESADDR1) + 4 * w);
	ernic_ip_from_regs(v6, word, ip.addr);
	ernic_ip_to_gid(&ip, dst->gid);
	ernic_mac_from_regs(ernic_rd(acc, ERNIC_QP(i, ERNIC_MACDESADDLSB)),
			    ernic_rd(acc, ERNIC_QP(i, ERNIC_MACDESADDMSB)),
			    dst->mac);
	dst->qpn = ERNIC_FIELD_GET(ERNIC_DESTQPCONF_QPN,
				   ernic_rd(acc, ERNIC_QP(i, ERNIC_DESTQPCONF)));
	dst->pkey = (uint16_t)ERNIC_FIELD_GET(ERNIC_QPADVCONF_PKEY, adv);
	dst->hop_limit = (uint8_t)ERNIC_FIELD_GET(ERNIC_QPADVCONF_TTL, adv);
	/* The QP's DSCP; a CNP is not ECN-capable (ECN bits 0). */
	dst->traffic_class =
		(uint8_t)(ERNIC_FIELD_GET(ERNIC_QPADVCONF_TRAFFIC_CLASS, adv)
			  << 2);
}

void ernic_cnp_send(struct ernic_dev *dev,
		    const uint32_t words[ERNIC_CNPSCHD_WORDS])
{
	struct ernic_mad_peer dst;

	if (!dev->mad)
		return;
	for (uint32_t i = ERNIC_FIRST_RC_QP; i <= dev->conf.c_num_qp; i++) {
		if (!(words[ERNIC_CNPSCHD_WORD(i) - 1] & ERNIC_CNPSCHD_BIT(i)) ||
		    !(ernic_rd(dev->acc, ERNIC_QP(i, ERNIC_QPCONF)) &
		      ERNIC_QPCONF_QP_EN))
			continue;
		cnp_peer(dev->acc, i, &dst);
		if (ernic_cnp_tx(dev, &dst))
			ernic_dbg("QP %u: CNP not sent (QP1 busy)", i);
	}
}
