/* SPDX-License-Identifier: MIT */
/*
 * What the model_rx test program's files share: the bench, its PSNs and
 * the tests of test_model_read.c (READs at requester and responder),
 * test_model_window.c (the device's send window), test_model_nak.c
 * (NAKs at the requester) and test_model_hold.c (the RX pause).
 */
#ifndef TEST_MODEL_RX_H
#define TEST_MODEL_RX_H

#include "model_harness.h"

#define RQ_PSN 500u
#define SQ_PSN 100u
#define MS 1000000ull

int bench_up(void **state);
int bench_down(void **state);
/* Nothing more was sent: fails the test otherwise. */
void no_tx(struct mh *h);
/* A response (ACK, NAK, READ response with 16 bytes) from the peer. */
void rx_ack(struct mh *h, uint8_t opcode, uint8_t syn, uint32_t psn);
/* The next packet sent is an ACK-opcode packet with this AETH syndrome
 * (ACKs: any credit count) and PSN. */
void want_aeth(struct mh *h, uint8_t syn, uint32_t psn);
/* A 32-byte request from the peer to QP dqpn, asking for an ACK, run
 * at once. */
void send_only(struct mh *h, uint32_t dqpn, uint32_t psn, uint8_t opcode,
	       uint32_t imm);

void test_read_keeps_progress(void **state);
void test_read_last_for_only(void **state);
void test_read_replay_opcodes(void **state);
void test_read_replay_short(void **state);
void test_nak_after_unfinished_read(void **state);
void test_read_repeats_keep_room(void **state);
void test_read_then_acked(void **state);
void test_read_passed_twice(void **state);
void test_read_resumed_fresh(void **state);
void test_device_window(void **state);
void test_device_window_rnr(void **state);
void test_device_window_all_lost(void **state);
void test_retry_window(void **state);
void test_retry_window_done(void **state);
void test_rnr_nak_completes_nothing(void **state);
void test_send_needs_receive(void **state);
void test_write_imm_needs_receive(void **state);
void test_pause_is_per_qp(void **state);
void test_hold_lengths(void **state);
void test_held_queue(void **state);
void test_rqci_word(void **state);

#endif
