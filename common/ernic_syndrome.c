// SPDX-License-Identifier: MIT
/* PG332 Table 2-3 (ernic_syndrome.h), in our words. */
#include <stddef.h>

#include "ernic_hw.h"
#include "ernic_syndrome.h"

#define DROP "dropped"

static const struct ernic_syndrome rows[ERNIC_SYNDROME_BITS] = {
	[0] = { "MAC", "destination MAC is not the device's", DROP },
	[2] = { "IP", "IP version is not the device's", DROP },
	[3] = { "IPv4", "header length is not 20 bytes", DROP },
	[5] = { "IPv4", "flags are not DF alone (3'b010)", DROP },
	[6] = { "IPv4", "fragment offset is not 0", DROP },
	[8] = { "IP", "destination address is not the device's", DROP },
	[9] = { "IPv4", "header checksum is wrong", DROP },
	[10] = { "IP", "total / payload length out of range", DROP },
	[12] = { "UDP", "length disagrees with the IP length", DROP },
	[13] = { "BTH", "version is not 0", DROP },
	[14] = { "BTH", "destination QP not supported", DROP },
	[15] = { "BTH", "destination QP not configured or not enabled", DROP },
	[16] = { "BTH", "opcode out of sequence",
		 "NAK-Invalid sent, QP fatal" },
	[17] = { "BTH", "opcode unsupported or reserved",
		 "NAK-Invalid sent, QP fatal" },
	[18] = { "BTH", "pad count not 0 on a FIRST or MIDDLE packet", DROP },
	[19] = { "transport", "payload does not fit the QP's PMTU", DROP },
	[20] = { "internal", "receive queue full", "RNR NAK sent" },
	[21] = { "transport", "request PSN out of sequence",
		 "NAK-Sequence sent" },
	[22] = { "transport", "AETH syndrome malformed", DROP },
	[23] = { "transport", "bad response or NAK-Invalid received",
		 "QP fatal" },
	[27] = { "IP", "source address is not the QP's remote", DROP },
	[28] = { "MAC", "source MAC is not the QP's remote", DROP },
	[30] = { "link", "ICRC is wrong", DROP },
	[31] = { "link", "FCS error (the model: headers cut short)", DROP },
};

const struct ernic_syndrome *ernic_syndrome_row(uint32_t b)
{
	return b < ERNIC_SYNDROME_BITS && rows[b].layer ? &rows[b] : NULL;
}

/* PG332 Table 2-4 (ernic_syndrome.h), in our words. */
static const char *const fatal[ERNIC_FATAL_CODES] = {
	[ERNIC_FATAL_OPCODE_SEQ] = "opcode sequence check failed",
	[ERNIC_FATAL_REQ_LEN] = "request length not as per PMTU, or pad count",
	[ERNIC_FATAL_OPCODE_SEQ_AND_LEN] =
		"opcode sequence and length or pad count together",
	[ERNIC_FATAL_UNSUPPORTED_OPCODE] =
		"unsupported request opcode with the right PSN",
	[ERNIC_FATAL_WQE_PROCESSOR] = "WQE processor",
	[ERNIC_FATAL_RESP_HANDLER] = "response handler",
	[ERNIC_FATAL_WRITE_LEN] = "WRITE length or pad count check failed",
	[ERNIC_FATAL_WRITE_OPCODE_SEQ] = "WRITE opcode sequence check failed",
	[ERNIC_FATAL_WRITE_SEQ_AND_LEN] =
		"WRITE opcode sequence and length together",
	[ERNIC_FATAL_RKEY_ACCESS] = "R_Key or access permission check failed",
	[ERNIC_FATAL_RETH_DMA_LEN] = "RETH DMA length check failed",
	[ERNIC_FATAL_RKEY_AND_DMA_LEN] = "R_Key/access and DMA length together",
	[ERNIC_FATAL_READ_RESOURCES_FULL] = "READ request resources full",
	[ERNIC_FATAL_ACK_OPCODE] = "ACK response opcode not correct",
	[ERNIC_FATAL_RNR_DOWN_COUNTER] = "RNR NAK down counter expired",
	[ERNIC_FATAL_REMOTE_NAK] = "NAK-Invalid, remote access or remote "
				   "operational error received",
	[ERNIC_FATAL_READ_RESP_LAST] = "READ response LAST packet error",
	[ERNIC_FATAL_BAD_AETH] = "bad AETH syndrome",
	[ERNIC_FATAL_READ_RESP_MIDDLE_LEN] =
		"READ response MIDDLE length check failed",
	[ERNIC_FATAL_READ_RESP_LAST_NOT_ONLY] =
		"READ response LAST instead of ONLY",
	[ERNIC_FATAL_BAD_RESPONSE] = "bad response",
	[ERNIC_FATAL_RNR_COUNTER] = "RNR retry counter expired",
	[ERNIC_FATAL_READ_RESP_ONLY_LEN] =
		"READ response ONLY length check failed",
};

const char *ernic_fatal_text(uint32_t c, int *remote)
{
	if (remote)
		*remote = c == ERNIC_FATAL_REMOTE_NAK;
	return c < ERNIC_FATAL_CODES ? fatal[c] : NULL;
}
