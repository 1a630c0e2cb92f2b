/* SPDX-License-Identifier: MIT */
/*
 * Sharing a hardware ERNIC (UIO; docs/multiprocess.md): the broker owns
 * the IP's global registers, QP1 and the DMA region's pages, and each
 * client process drives its own QPs. They talk over a UNIX
 * SOCK_SEQPACKET socket beside the device's ernic.conf. A client opens
 * two connections:
 *
 *   control  requests, each answered in order when it has an answer:
 *            ATTACH (VFIO, before HELLO: -> the device's files),
 *            HELLO (-> HELLO answer), DMA_GET and DMA_CLAIM (-> DMA
 *            answer), DMA_PUT (of whole allocations), MAD_SEND, AGENT
 *            (no answer)
 *   events   after its HELLO_EV, only the broker speaks: MAD_RECV, FATAL,
 *            KICK (the broker alone takes the IP's interrupt and clears
 *            INTSTS; it then reads the per-QP status words and kicks
 *            each process with a QP bit set in them, which clears its
 *            own bits as it services them)
 *
 * The control connection's end is the client's end: the broker then
 * disables what the client's slot still owns in the IP and takes its
 * pages back (ernic_broker.c).
 */
#ifndef ERNIC_BROKER_H
#define ERNIC_BROKER_H

#include <stdint.h>

#include "ernic_mad_frame.h"
#include "ernicdv.h"
#include "ibta.h"

#define ERNIC_BROKER_SOCK "ernic.broker"	/* beside ernic.conf */
#define ERNIC_BROKER_VERSION 1u

enum ernic_broker_op {
	EB_HELLO = 1,		/* control: slot; -> status, doorbell pool */
	EB_HELLO_EV,		/* events: slot */
	EB_DMA_GET,		/* len, align -> status, bus */
	EB_DMA_PUT,		/* bus, len */
	EB_MAD_SEND,		/* peer, MAD */
	EB_AGENT,		/* a MAD agent of class made or gone */
	EB_MAD_RECV,		/* events: sender, MAD */
	EB_FATAL,		/* events: QP, Table 2-4 code */
	EB_KICK,		/* events: service your QPs' status bits */
	EB_DMA_CLAIM,		/* bus, len: exactly these pages -> status */
	EB_ATTACH,		/* before HELLO, for a device a client cannot
				 * open itself (VFIO) -> status, the shared
				 * region's bus and len, and with SCM_RIGHTS
				 * the device's file and the region's */
	EB_LOST,		/* events: the device is gone (registers all-ones) */
};

struct eb_msg {
	uint32_t op;
	uint32_t version;	/* HELLO */
	int32_t status;		/* answers: 0 or an errno */
	uint32_t slot;		/* HELLO*: the client's state-file slot */
	uint64_t bus, len, align;	/* DMA_*, HELLO: the doorbell pool */
	uint32_t qpn, code;	/* FATAL */
	uint8_t mgmt_class, on;	/* AGENT */
	uint8_t pad[6];
	union {
		struct ernic_mad_peer peer;	/* MAD_SEND */
		struct ernicdv_mad_addr from;	/* MAD_RECV */
	};
	uint8_t mad[IB_MAD_SIZE];
};

struct ernic_dev;

/* The broker side (ernic_broker.c). Called by the interrupt thread: a
 * MAD from QP1 for some client (false: nobody's, keep it here), and a
 * FATAL of a QP this process does not own. */
bool ernic_broker_mad_rx(struct ernic_dev *dev,
			 const struct ernicdv_mad_addr *from,
			 const uint8_t *mad);
void ernic_broker_fatal(struct ernic_dev *dev, uint32_t qpn, uint32_t code);
/* After INTSTS's completion or receive cause was cleared: kick the
 * clients whose QPs have bits set in the per-QP status words. */
void ernic_broker_kick(struct ernic_dev *dev);
/* The device is gone (ernic_events_lost): the broker's thread ends its
 * service, and its clients, their connections closed, lose it too. */
void ernic_broker_lost(struct ernic_dev *dev);

/* The client side (ernic_client.c). connect: 0 when the device has a
 * broker (this process becomes its client), ENOENT when it has none. */
int ernic_client_connect(struct ernic_dev *dev, char *err, size_t errlen);
/* After the state file gave this process its slot: introduce both
 * connections, learn the doorbell pool, take pages from the broker. */
int ernic_client_hello(struct ernic_dev *dev, char *err, size_t errlen);
/* Before the access layer: the files of a device this process cannot
 * open itself (EB_ATTACH), for ernic_access_attach. */
struct ernic_access_share;
int ernic_client_attach(struct ernic_dev *dev,
			struct ernic_access_share *share, char *err,
			size_t errlen);
void ernic_client_close(struct ernic_dev *dev);
int ernic_client_event_fd(struct ernic_dev *dev);
/* The interrupt thread: what the broker sent on the event connection. */
void ernic_client_event(struct ernic_dev *dev);
int ernic_client_mad_send(struct ernic_dev *dev,
			  const struct ernic_mad_peer *peer, const void *mad);
void ernic_client_agent(struct ernic_dev *dev, uint8_t mgmt_class, bool on);

/* Run the broker of the device whose ernic.conf is conf_path, named
 * name in messages, until stop_fd turns readable; once it serves,
 * "ready\n" is written to ready_fd (-1: none). 0, or an errno with the reason
 * in err. Exported for ernic-broker (libernic.map ERNIC_PRIVATE_1). */
/* A MAD that no client takes (no listener, a connection nobody has):
 * fill answer[IB_MAD_SIZE] and return true to send it to the sender. */
typedef bool (*ernic_broker_unrouted_fn)(const uint8_t *mad,
					 uint8_t *answer);
int ernic_broker_run(const char *conf_path, const char *name, int stop_fd,
		     int ready_fd, ernic_broker_unrouted_fn unrouted,
		     char *err, size_t errlen);

/* The path of the device's broker socket, beside its ernic.conf. */
int ernic_broker_path(const struct ernic_dev *dev, char *buf, size_t len);

#endif
