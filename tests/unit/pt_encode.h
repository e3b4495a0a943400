/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libipt's encoder for the ptdec unit tests: pt_encode(buf, len, pk, n) writes
 * the n packets pk[0..n) into buf (len bytes) and returns the bytes written;
 * a packet libipt cannot encode fails the test (CHECK, snap_test.h).
 */
#ifndef SNAP_TEST_PT_ENCODE_H
#define SNAP_TEST_PT_ENCODE_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

#include "snap_test.h"

static inline size_t pt_encode(uint8_t *buf, size_t len, const struct pt_packet *pk, size_t n)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t off = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	enc = pt_alloc_encoder(&cfg);
	CHECK(enc != NULL);
	if (!enc)
		return 0;
	for (size_t i = 0; i < n; i++)
		CHECK(pt_enc_next(enc, &pk[i]) > 0);
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return (size_t)off;
}

#endif
