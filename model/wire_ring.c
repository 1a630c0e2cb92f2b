// SPDX-License-Identifier: MIT
/* The frame wire's PACKET_MMAP rings (wire_ring.h). */
#include <errno.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "wire_ring.h"

/* A block of the ring: whole slots, a multiple of the page size. */
#define RING_BLOCK (8u * WIRE_RING_FRAME)
/* Where a slot's frame starts: after the kernel's header (TPACKET_V2,
 * no PACKET_TX_HAS_OFF: the data follows the header's aligned end). */
#define SLOT_DATA TPACKET_ALIGN(sizeof(struct tpacket2_hdr))

_Static_assert(WIRE_RING_FRAME % TPACKET_ALIGNMENT == 0,
	       "slots are TPACKET_ALIGNMENT aligned");
_Static_assert(WIRE_RING_RX_FRAMES % (RING_BLOCK / WIRE_RING_FRAME) == 0 &&
		       WIRE_RING_TX_FRAMES % (RING_BLOCK / WIRE_RING_FRAME) == 0,
	       "rings are whole blocks");

static size_t ring_bytes(uint32_t frames)
{
	return (size_t)frames * WIRE_RING_FRAME;
}

/* A ring of `frames` slots, in whole blocks. */
static struct tpacket_req ring_req(uint32_t frames)
{
	return (struct tpacket_req){
		.tp_block_size = RING_BLOCK,
		.tp_block_nr = (unsigned int)(ring_bytes(frames) / RING_BLOCK),
		.tp_frame_size = WIRE_RING_FRAME,
		.tp_frame_nr = frames,
	};
}

static struct tpacket2_hdr *rx_slot(const struct wire_ring *g, uint32_t i)
{
	return (struct tpacket2_hdr *)(g->map + (size_t)i * WIRE_RING_FRAME);
}

static struct tpacket2_hdr *tx_slot(const struct wire_ring *g, uint32_t i)
{
	return (struct tpacket2_hdr *)(g->map +
				       ring_bytes(WIRE_RING_RX_FRAMES) +
				       (size_t)i * WIRE_RING_FRAME);
}

static uint32_t status_of(const struct tpacket2_hdr *h)
{
	return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}

static void status_set(struct tpacket2_hdr *h, uint32_t status)
{
	__atomic_store_n(&h->tp_status, status, __ATOMIC_RELEASE);
}

static int ring_opt(int fd, int name, const void *v, socklen_t len,
		    const char *what, char *err, size_t errlen)
{
	int e;

	if (!setsockopt(fd, SOL_PACKET, name, v, len))
		return 0;
	e = errno;
	snprintf(err, errlen, "AF_PACKET %s: %s", what, strerror(e));
	return e;
}

int wire_ring_init(struct wire_ring *g, int fd, struct model_wire_stats *stats,
		   char *err, size_t errlen)
{
	const int v2 = TPACKET_V2, one = 1;
	const struct tpacket_req rx = ring_req(WIRE_RING_RX_FRAMES),
				 tx = ring_req(WIRE_RING_TX_FRAMES);
	int e;

	memset(g, 0, sizeof(*g));
	g->stats = stats;
	/* A frame longer than a slot is queued whole as well (COPY). */
	if ((e = ring_opt(fd, PACKET_VERSION, &v2, sizeof(v2), "TPACKET_V2",
			  err, errlen)) ||
	    (e = ring_opt(fd, PACKET_COPY_THRESH, &one, sizeof(one),
			  "copy threshold", err, errlen)) ||
	    (e = ring_opt(fd, PACKET_LOSS, &one, sizeof(one), "loss mode",
			  err, errlen)) ||
	    (e = ring_opt(fd, PACKET_RX_RING, &rx, sizeof(rx), "receive ring",
			  err, errlen)) ||
	    (e = ring_opt(fd, PACKET_TX_RING, &tx, sizeof(tx),
			  "transmit ring", err, errlen)))
		return e;
	g->map_len = ring_bytes(WIRE_RING_RX_FRAMES) +
		     ring_bytes(WIRE_RING_TX_FRAMES);
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0);
	if (g->map == MAP_FAILED) {
		e = errno;
		g->map = NULL;
		snprintf(err, errlen, "AF_PACKET rings: mmap: %s",
			 strerror(e));
		return e;
	}
	return 0;
}

void wire_ring_fini(struct wire_ring *g)
{
	if (g->map)
		munmap(g->map, g->map_len);
	g->map = NULL;
}

void wire_ring_rx_release(struct wire_ring *g)
{
	if (!g->rx_lent)
		return;
	g->rx_lent = false;
	status_set(rx_slot(g, (g->rx_head + WIRE_RING_RX_FRAMES - 1) %
				      WIRE_RING_RX_FRAMES),
		   TP_STATUS_KERNEL);
}

bool wire_ring_rx_next(struct wire_ring *g, struct wire_ring_frame *f)
{
	struct tpacket2_hdr *h;
	const struct sockaddr_ll *sll;
	uint32_t status;

	wire_ring_rx_release(g);
	h = rx_slot(g, g->rx_head);
	status = status_of(h);
	if (!(status & TP_STATUS_USER))
		return false;
	sll = (const struct sockaddr_ll *)((const uint8_t *)h + SLOT_DATA);
	f->status = status;
	f->pkttype = sll->sll_pkttype;
	f->len = h->tp_len;
	/* the kernel's word, but checked: nothing outside the slot */
	if (h->tp_mac < SLOT_DATA || h->tp_mac > WIRE_RING_FRAME ||
	    h->tp_snaplen > WIRE_RING_FRAME - h->tp_mac) {
		f->data = (const uint8_t *)h + WIRE_RING_FRAME;
		f->snaplen = 0;
	} else {
		f->data = (const uint8_t *)h + h->tp_mac;
		f->snaplen = h->tp_snaplen;
	}
	g->rx_head = (g->rx_head + 1) % WIRE_RING_RX_FRAMES;
	g->rx_lent = true;
	return true;
}

uint8_t *wire_ring_tx_slot(struct wire_ring *g, int fd, size_t *cap)
{
	struct tpacket2_hdr *h = tx_slot(g, g->tx_head);

	if (status_of(h) != TP_STATUS_AVAILABLE) {
		/* the kernel may not have been told of it yet */
		(void)wire_ring_tx_flush(g, fd);
		if (status_of(h) != TP_STATUS_AVAILABLE)
			return NULL;
	}
	*cap = WIRE_RING_FRAME - SLOT_DATA;
	return (uint8_t *)h + SLOT_DATA;
}

int wire_ring_tx_commit(struct wire_ring *g, int fd, size_t len)
{
	struct tpacket2_hdr *h = tx_slot(g, g->tx_head);

	if (len > WIRE_RING_FRAME - SLOT_DATA)
		return EMSGSIZE;
	h->tp_len = (uint32_t)len;
	status_set(h, TP_STATUS_SEND_REQUEST);
	g->tx_head = (g->tx_head + 1) % WIRE_RING_TX_FRAMES;
	if (++g->tx_queued < WIRE_RING_TX_BATCH)
		return 0;
	return wire_ring_tx_flush(g, fd);
}

int wire_ring_tx_flush(struct wire_ring *g, int fd)
{
	if (!g->tx_queued)
		return 0;
	g->tx_queued = 0;
	g->stats->tx_calls++;
	/* every slot marked SEND_REQUEST goes, none waited for */
	if (send(fd, NULL, 0, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
		return 0;	/* a full link: the frames wait or are lost */
	return errno;
}
