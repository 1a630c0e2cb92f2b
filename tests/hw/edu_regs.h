/* SPDX-License-Identifier: MIT */
/*
 * QEMU's edu device as the kernel test bed's stand-in card (tests/hw/
 * vfio_edu.c, uio_edu.c): its registers (QEMU docs/specs/edu.rst).
 */
#ifndef ERNIC_TEST_EDU_REGS_H
#define ERNIC_TEST_EDU_REGS_H

#include <stdint.h>

#define EDU_ID 0x00		/* 0x010000ed */
#define EDU_ID_VALUE 0x010000edu
#define EDU_LIVE 0x04		/* reads back inverted */
#define EDU_IRQ_STATUS 0x24
#define EDU_IRQ_RAISE 0x60
#define EDU_IRQ_ACK 0x64
#define EDU_DMA_SRC 0x80
#define EDU_DMA_DST 0x88
#define EDU_DMA_CNT 0x90
#define EDU_DMA_CMD 0x98
#define EDU_DMA_RUN 1u
#define EDU_DMA_TO_RAM 2u
#define EDU_BUF 0x40000u	/* its 4 KiB DMA buffer, in its own space */

#endif
