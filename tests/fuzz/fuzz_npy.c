/* libFuzzer harness of the .npy reader (tools/pk/npy_parse.c): any bytes
 * as a whole file. A refusal must be PK_ERR_IO with a one-line reason; an
 * accepted file must describe data inside the buffer (every byte of it is
 * read here, so that AddressSanitizer sees a lie), and its header, written
 * again by pk_npy_format_header, must parse to the same array. Built with
 * -DPK_BUILD_FUZZERS=ON by Clang (tests/files/files.cmake); run:
 *   fuzz_npy NEW_CORPUS_DIR tests/fuzz/corpus/npy -max_total_time=60 */
#include "fuzz.h"
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    pk_npy_header h;
    char err[PK_NPY_ERR_LEN];
    memset(err, 'x', sizeof err);
    pk_status s = pk_npy_parse(data, size, &h, err, sizeof err);
    if (s != PK_OK) {
        REQUIRE(s == PK_ERR_IO);
        REQUIRE(memchr(err, 0, sizeof err) && err[0] && !strchr(err, '\n'));
        return 0;
    }
    REQUIRE(h.version >= 1 && h.version <= 3);
    REQUIRE((unsigned)h.type < PK_NPY_TYPE_COUNT);
    REQUIRE(h.ndim >= 0 && h.ndim <= PK_NPY_MAX_DIMS);
    int64_t count = 1;
    for (int i = 0; i < h.ndim; i++) {
        REQUIRE(h.shape[i] >= 0);
        count *= h.shape[i]; /* no overflow: the byte count was checked */
    }
    REQUIRE(count == h.count);
    REQUIRE(h.data_bytes == count * (int64_t)pk_npy_type_size(h.type));
    REQUIRE(h.data_offset >= 10 && (uint64_t)h.data_offset <= size);
    REQUIRE((uint64_t)h.data_bytes <= size - (uint64_t)h.data_offset);
    unsigned sum = 0;
    for (int64_t i = 0; i < h.data_bytes; i++) sum += data[h.data_offset + i];
    /* The header again, as pk writes it, parses to the same array. */
    char again[PK_NPY_MAX_DIMS * 24 + 256];
    size_t n = pk_npy_format_header(again, sizeof again, h.version, h.type, h.ndim, h.shape);
    REQUIRE(n > 0 && n % 64 == 0);
    unsigned char *file = malloc(n + (size_t)h.data_bytes + 1);
    REQUIRE(file);
    memcpy(file, again, n);
    memcpy(file + n, data + h.data_offset, (size_t)h.data_bytes);
    pk_npy_header h2;
    REQUIRE(pk_npy_parse(file, n + (size_t)h.data_bytes, &h2, err, sizeof err) == PK_OK);
    REQUIRE(h2.version == h.version && h2.type == h.type && h2.ndim == h.ndim);
    REQUIRE(h2.count == h.count && h2.data_bytes == h.data_bytes && h2.data_offset == (int64_t)n);
    REQUIRE(memcmp(h2.shape, h.shape, (size_t)h.ndim * sizeof *h.shape) == 0);
    free(file);
    return (int)(sum & 0); /* keep the reads */
}
