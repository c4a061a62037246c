/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_keyenc.c
 * @brief libFuzzer target: a record's key as the scan and the plugin
 *        decode it (core/model/ks_keyenc.c: the encodings, Schema Registry
 *        framing, Avro varints and strings, JSON string escapes, UUIDs;
 *        the partitioners' hashes). The input is the key's bytes.
 *
 * Invariants (ks_keyenc.h): a schema id is found exactly when the key
 * classifies as `schema_registry`, and is 1..2^31-1; a logical value fits
 * KS_KEYENC_LOGICAL_SIZE(len) (the buffer is exactly that, on the heap,
 * for ASan to see one byte more), is not empty, and a smaller buffer
 * never overflows; an encoding's name reads back as itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ks_hash.h"
#include "ks_keyenc.h"
#include "ks_partitioner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t      outsz = KS_KEYENC_LOGICAL_SIZE(size), small;
        char       *out   = malloc(outsz);
        ks_keyenc_t enc, e, back;
        int32_t     id;
        int         p;

        if (!out)
                return 0;
        enc = ks_keyenc_classify(data, size);
        id  = ks_keyenc_schema_id(data, size);
        if ((enc == KS_KEYENC_SCHEMA_REGISTRY) != (id > 0))
                abort();
        if (ks_keyenc_from_name(ks_keyenc_name(enc), &back) || back != enc)
                abort();
        for (e = KS_KEYENC_NULL; e < KS_KEYENC__CNT; e++) {
                if (ks_keyenc_logical(data, size, e, out, outsz) == 0) {
                        size_t n = strlen(out);
                        if (n == 0 || n >= outsz)
                                abort();
                        /* any smaller buffer: refused or the same value */
                        small = size ? data[0] % (n + 1) + 1 : 1;
                        {
                                char *s = malloc(small);
                                if (s) {
                                        if (ks_keyenc_logical(data, size, e, s,
                                                              small) == 0 &&
                                            strcmp(s, out))
                                                abort();
                                        free(s);
                                }
                        }
                } else if (outsz && out[0]) {
                        abort(); /* left as an empty string on failure */
                }
        }
        (void)ks_hash_key64(data, size);
        for (p = 0; p < KS_PARTITIONER__CNT; p++) {
                uint32_t h =
                    ks_partitioner_hash((ks_partitioner_t)p, data, size);
                if (ks_partition_of(h, 7) < 0 || ks_partition_of(h, 7) > 6)
                        abort();
        }
        free(out);
        return 0;
}
