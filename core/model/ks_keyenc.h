/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_keyenc.h
 * @brief Key encodings: which serializer most plausibly wrote a key's
 *        bytes, and the logical value those bytes carry.
 *
 * Kafka partitions by the key's *bytes*. The same vessel, order or customer
 * sent as the string "211234567" by one code path and as a 4-byte int by
 * another hashes to two partitions, and ordering between the two streams is
 * lost. keyshift detects this by classifying every key's encoding and
 * mapping it to a canonical *logical value*: keys with one logical value but
 * different bytes are the same entity serialized two ways.
 *
 * ## Encodings and what writes them
 *
 *  - `null`: no key (NULL). `empty`: zero bytes.
 *  - `decimal`: a canonical ASCII integer in int64 range (Java's
 *    `StringSerializer` of a number; a JSON serializer given a number).
 *  - `text`: other UTF-8 without control characters (`StringSerializer`,
 *    and `UUIDSerializer`, which writes the 36-character text form).
 *  - `json_string`: a JSON string literal `"..."` (a JSON serializer given
 *    a string).
 *  - `int32_be`: exactly 4 bytes, big-endian (`IntegerSerializer`).
 *  - `int64_be`: exactly 8 bytes, big-endian (`LongSerializer`).
 *  - `uuid_binary`: exactly 16 raw bytes (code writing the UUID's two
 *    longs itself; not Kafka's `UUIDSerializer`).
 *  - `schema_registry`: 0x00, a 4-byte big-endian schema id, a payload
 *    (Confluent's Avro, Protobuf and JSON Schema serializers).
 *  - `binary`: anything else.
 *
 * Kafka's own `UUIDSerializer` writes `UUID.toString()` as UTF-8, the
 * 36-character text form, so its keys are `text`; only code that writes the
 * two longs itself produces `uuid_binary`. Both have the same logical value.
 *
 * ## Precedence (the first rule that matches wins)
 *
 *  1. NULL → `null`; zero bytes → `empty`.
 *  2. Text wins over every fixed-width binary form. Valid UTF-8 (RFC 3629)
 *     without control characters (Unicode category Cc: U+0000–U+001F,
 *     U+007F–U+009F) is `decimal` if it is a canonical integer, else
 *     `json_string` if it is a JSON string literal, else `text`.
 *     Why: text keys are by far the most common, and the binary forms
 *     almost never look like text: an int32/int64 below 2^24/2^56 starts
 *     with 0x00, a control character, and a Schema Registry key always
 *     starts with 0x00. So "1234" is `decimal` (not the int32 825373492),
 *     and "ABCD" is `text`. The price: an int32 whose four bytes happen to
 *     be clean text is read as text. From 0 to 2^29-1 that never happens
 *     (the first byte is a control character); above, it does: 7.6% of
 *     the int32 MMSIs from 536870912 on (MIDs 536-775: Marshall Islands,
 *     Singapore, Liberia, ...) look like text, e.g. 675361383 is "(APg".
 *     One key cannot tell; a topic whose other 4-byte keys are `int32_be`
 *     can: ks_keyenc_logical() with KS_KEYENC_INT32_BE reinterprets them.
 *  3. `decimal` means exactly what `Long.toString()` / `printf("%lld")`
 *     writes: an optional '-', then "0" or digits without a leading zero,
 *     within int64 range. "007", "+7", "-0", "1e3" and 20-digit account
 *     numbers are `text`. Why: a number serializer can write only the
 *     canonical form, so only that form can be the same key as an
 *     int32_be/int64_be; a zero-padded code ("007") is a string identifier
 *     whose padding is part of its identity.
 *  4. `json_string` is an RFC 8259 §7 string literal: '"' at both ends,
 *     every '"' and '\' inside escaped, escapes among \" \\ \/ \b \f \n \r
 *     \t \uXXXX, and a \u surrogate only as a high+low pair (a lone
 *     surrogate cannot be decoded to UTF-8, so such a key is `text`).
 *  5. Not text, exactly 4 bytes → `int32_be`; exactly 8 bytes →
 *     `int64_be`, even when it starts with 0x00 like a Schema Registry key.
 *     Why: `LongSerializer` of any id below 2^56 starts with 0x00, and
 *     from 2^24 on bytes 1-4 also make a plausible schema id; an int64 key
 *     whose last 3 bytes happen to decode as one Avro value (about 1 in 8)
 *     would be misread. The price: every Schema Registry key of 8 bytes is
 *     read as int64_be: a 3-byte payload, i.e. an Avro int/long in
 *     8192..1048575 or -1048576..-8193, or an Avro string of 2 bytes
 *     ("DE", "42").
 *  6. Not text, exactly 16 bytes → `uuid_binary`, unless it also looks like
 *     a Schema Registry key (rule 7) and either lacks the RFC 9562 UUID
 *     layout (version 1–8 in the high nibble of byte 6, variant bits 10 in
 *     byte 8) or its payload decodes as an Avro int/long/string of exactly
 *     the remaining bytes. Why: a random UUID starts with 0x00 once in 256,
 *     but its version/variant bits and an 11-byte payload that is exactly
 *     one Avro value almost never coincide, while a Schema Registry key
 *     with an Avro string of 10 characters is 16 bytes long.
 *  7. Not text, at least 6 bytes, byte 0 is 0x00 and the big-endian schema
 *     id of bytes 1–4 is 1..2^31-1 (Schema Registry ids start at 1) →
 *     `schema_registry`. Six bytes because every payload has at least one
 *     byte (Avro's smallest value, Protobuf's message-index byte).
 *  8. Anything else → `binary`.
 *
 * ## Logical values
 *
 * ks_keyenc_logical() writes a canonical text form. Numbers and strings are
 * deliberately *not* told apart: the MMSI 211234567 sent as text, as JSON
 * "\"211234567\"", as an int32_be or int64_be, or as a Schema-Registry Avro
 * int/long/string is ONE logical key "211234567", because that is the one
 * vessel a Kafka engineer means. Canonical forms:
 *  - `decimal`, `text`: the text itself; `json_string`: the decoded string
 *    (UTF-8). Any of them shaped like a UUID (8-4-4-4-12 hex digits, any
 *    case) is lower-cased, as `UUID.toString()` writes it.
 *  - `int32_be`, `int64_be`: the signed two's complement value in decimal
 *    (Java's serializers write signed ints).
 *  - `uuid_binary`: the lower-case 8-4-4-4-12 form of the 16 bytes.
 *  - `schema_registry`: the Avro payload decoded as a long (zigzag varint,
 *    Avro 1.11 spec "Binary Encoding") when it is exactly one varint, else
 *    as a string (length varint + UTF-8 without control characters) when
 *    that uses exactly the payload. A payload of the single byte 0x00 is
 *    the number 0 (it is also Avro's empty string). Protobuf and JSON
 *    Schema payloads cannot be decoded without the schema: no value.
 *  - `null`, `empty`, `binary`, and any value that would be the empty string
 *    or contain a NUL: no logical value.
 *
 * All functions are pure and thread-safe (any thread; no locks).
 */
#ifndef KS_KEYENC_H
#define KS_KEYENC_H

#include <stddef.h>
#include <stdint.h>

typedef enum ks_keyenc {
        KS_KEYENC_NULL = 0,
        KS_KEYENC_EMPTY,
        KS_KEYENC_DECIMAL,
        KS_KEYENC_TEXT,
        KS_KEYENC_JSON_STRING,
        KS_KEYENC_INT32_BE,
        KS_KEYENC_INT64_BE,
        KS_KEYENC_UUID_BINARY,
        KS_KEYENC_SCHEMA_REGISTRY,
        KS_KEYENC_BINARY,
        KS_KEYENC__CNT
} ks_keyenc_t;

/**
 * @brief A buffer of this many bytes always holds the logical value of a
 *        key of @p len bytes with its NUL: a logical value is never longer
 *        than the key, or than 36 characters (a UUID; an int64 takes 20).
 */
#define KS_KEYENC_LOGICAL_SIZE(len) (((len) > 36 ? (size_t)(len) : 36) + 1)

/**
 * @brief The report's name of an encoding.
 * @returns "null", "empty", "decimal", "text", "json_string", "int32_be",
 *          "int64_be", "uuid_binary", "schema_registry", "binary"; "?" for
 *          an out-of-range value.
 */
const char *ks_keyenc_name(ks_keyenc_t enc);

/**
 * @brief Parses a name returned by ks_keyenc_name().
 * @returns 0 and sets *out, or -1 for an unknown name.
 */
int ks_keyenc_from_name(const char *name, ks_keyenc_t *out);

/**
 * @brief Classifies a key's bytes by the precedence rules above.
 * @param key the key, NULL for a NULL key.
 * @param len its length in bytes (ignored when @p key is NULL).
 * @returns the encoding; never fails. O(len), no allocation.
 * @locality any thread (the producer's application threads on send).
 */
ks_keyenc_t ks_keyenc_classify(const void *key, size_t len);

/**
 * @brief The Confluent Schema Registry schema id of a key.
 * @returns the id (1..2^31-1) when ks_keyenc_classify() says
 *          `schema_registry`, else -1.
 */
int32_t ks_keyenc_schema_id(const void *key, size_t len);

/**
 * @brief Writes the canonical logical value of a key (see above) as a
 *        NUL-terminated UTF-8 string.
 * @param enc normally ks_keyenc_classify()'s answer for these bytes (it is
 *        not recomputed). Another encoding reinterprets the bytes when
 *        their length allows it (e.g. the int32 value of "1234") and has
 *        no value otherwise.
 * @param out receives the value; KS_KEYENC_LOGICAL_SIZE(len) bytes always
 *        suffice. Left as an empty string on failure (if @p outsz > 0).
 * @returns 0 on success; -1 when the key has no logical value under @p enc
 *          or @p outsz is too small.
 */
int ks_keyenc_logical(const void *key, size_t len, ks_keyenc_t enc, char *out,
                      size_t outsz);

#endif /* KS_KEYENC_H */
