/* `pk pack`, `pk bgemm`, `pk hamming` and `pk knn` on .npy files.
 *
 * A bit matrix file is either uint64 words, rows x words, as pk pack writes
 * (bit j of a row is bit j % 64 of word j / 64), or uint8 codes, rows x
 * bytes, the layout of FAISS's binary indexes: each row's bytes become
 * little-endian 64-bit words, zero-padded, so that Hamming distances are
 * FAISS's. A .npy header has no room for the bit count k of packed words:
 * pk pack prints it; bgemm needs it (--bits) with word files, hamming and
 * knn default to every bit of the words (right for rows packed by pk pack,
 * whose padding bits are 0 on both sides). */
#include "files.h"

#include <stdlib.h>
#include <string.h>

#define BITS_COMMON                                                              \
    "  --bits K       the bits a row (default: 8 x bytes for uint8 codes; 64 x\n" \
    "                 words for uint64 words); bits past K are ignored\n"        \
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND when set,\n"  \
    "                 else CUDA when a device exists)\n"                         \
    "  --json         print one JSON object instead of the summary line\n"      \
    "  -h, --help     this text\n"                                               \
    "\n"                                                                         \
    "Bit files: uint64 words (rows, words) as pk pack writes, or uint8 codes\n"   \
    "(rows, bytes) as FAISS's binary indexes hold (each row's bytes read as\n"   \
    "little-endian 64-bit words). A 1-D file is one row.\n"

static const char pack_usage[] =
    "usage: pk pack X.npy -o BITS.npy [--backend B] [--json]\n"
    "\n"
    "Pack the rows of X (rows x k, or one row of k) into bits, as pk_bits_pack:\n"
    "f32: x >= 0 (also -0.0) is 1, x < 0 and NaN are 0 (the sign of +-1\n"
    "data); uint8 or bool: nonzero is 1. BITS.npy holds uint64 words, rows x\n"
    "ceil(k/64) (1-D for 1-D input), bit j of a row in bit j % 64 of word\n"
    "j / 64, the padding bits 0. The summary gives k: pass it as --bits K to\n"
    "pk bgemm (hamming and knn are right without it).\n"
    "\n"
    "options:\n"
    "  -o FILE        the output (required)\n"
    "  --backend B    cpu, cuda or auto (default: auto)\n"
    "  --json         print one JSON object instead of the summary line\n"
    "  -h, --help     this text\n"
    "\n"
    "time: the kernel call; GB/s = bytes read + written / time.\n";

static const char bgemm_usage[] =
    "usage: pk bgemm A_BITS.npy B_BITS.npy --bits K -o C.npy [--backend B] [--json]\n"
    "\n"
    "Binary (+-1) matrix product, as pk_bgemm: C[i][j] = sum over the K bits of\n"
    "a_il * b_jl, bit 1 = +1, bit 0 = -1, = K - 2 x Hamming(row i of A, row j\n"
    "of B). B holds one row per output column. C is int32 (m, n). --bits is\n"
    "required with uint64 word files (pk pack printed K): counting the padding\n"
    "bits would add 64 x words - K to every entry.\n"
    "\n"
    "options:\n"
    "  -o FILE        the output (required)\n" BITS_COMMON
    "\n"
    "time: the kernel call; TOP/s = 2mnK bit operations / time.\n";

static const char hamming_usage[] =
    "usage: pk hamming Q.npy X.npy -o D.npy [--bits K] [--dtype i32|u16]\n"
    "                  [--backend B] [--json]\n"
    "\n"
    "All Hamming distances, as pk_hamming: D[i][j] = the bits in which row i of\n"
    "Q and row j of X differ; D is (m, n), int32 or (--dtype u16, K <= 65535)\n"
    "uint16.\n"
    "\n"
    "options:\n"
    "  -o FILE        the output (required)\n"
    "  --dtype T      i32 (default) or u16\n" BITS_COMMON
    "\n"
    "time: the kernel call; TOP/s = 2mnK bit operations / time.\n";

static const char knn_usage[] =
    "usage: pk knn --db CODES.npy --queries Q.npy -k K -o IDS.npy [--dist D.npy]\n"
    "              [--bits B] [--backend B] [--json]\n"
    "\n"
    "The K nearest database rows of each query row in Hamming distance, as\n"
    "pk_hamming_topk: IDS.npy is int64 (queries, K), nearest first, ties by\n"
    "the lower index; D.npy the int32 distances. 1 <= K <= database rows.\n"
    "\n"
    "options:\n"
    "  --db FILE      the database codes (n rows)\n"
    "  --queries FILE the query codes (m rows, as many bits a row)\n"
    "  -k K           neighbours per query\n"
    "  -o FILE        the indices (required)\n"
    "  --dist FILE    also write the distances\n" BITS_COMMON
    "\n"
    "time: the kernel call; TOP/s = 2mnB bit operations / time (B bits).\n";

/* ---- Bit matrices from files ------------------------------------------- */

typedef struct bitmat {
    const char *file;
    const uint64_t *words; /* rows x ldw */
    int64_t rows, ldw;
    int64_t width;         /* elements a row in the file: words or bytes */
    int64_t bits;          /* the bits a row holds */
    int bytes;             /* uint8 codes */
    uint64_t *owned;
} bitmat;

static const int bit_types[] = {PK_NPY_U64, PK_NPY_U8, -1};

static int load_bits(fc_run *r, const char *path, bitmat *b)
{
    const void *data;
    const pk_npy_header *h = fc_load(r, path, &data);
    memset(b, 0, sizeof *b);
    b->file = path;
    if (!h || fc_expect(r, path, h, bit_types, 1, 2)) return PK_EXIT_FAIL;
    b->rows = h->ndim == 2 ? h->shape[0] : 1;
    b->width = h->shape[h->ndim - 1];
    b->bytes = h->type == PK_NPY_U8;
    b->ldw = b->bytes ? (b->width + 7) / 8 : b->width;
    b->bits = (b->bytes ? 8 : 64) * b->width;
    b->words = data;
    if (!b->bytes && b->ldw > 0) return 0;
    /* uint8 rows as words (zero-padded), or one zero word a row for k = 0 */
    if (b->ldw == 0) b->ldw = 1;
    b->owned = calloc((size_t)(b->rows * b->ldw) + 1, sizeof *b->owned);
    if (!b->owned) return fc_file_error(r, path, "no memory to convert its rows to words");
    for (int64_t i = 0; i < b->rows && b->bytes; i++)
        memcpy(b->owned + i * b->ldw, (const uint8_t *)data + i * b->width, (size_t)b->width);
    b->words = b->owned;
    return 0;
}

/* The bit count K for two operands: --bits when given, else all the bits
 * both hold; required (a usage error without it) for word files when
 * need_bits. Returns 0, 1 or 2. */
static int resolve_bits(const fc_run *r, const char *opt, int need_bits, const bitmat *a,
                        const bitmat *b, int64_t *k)
{
    /* one kind: the same width; words and bytes: the same words a row */
    if (a->bytes == b->bytes ? a->width != b->width : a->ldw != b->ldw)
        return fc_file_error(r, b->file, "rows of %lld %s, %s's of %lld %s: not the same codes",
                             (long long)b->width, b->bytes ? "bytes" : "words", a->file,
                             (long long)a->width, a->bytes ? "bytes" : "words");
    const int64_t most = a->bits < b->bits ? a->bits : b->bits;
    if (!opt) {
        if (need_bits && !(a->bytes && b->bytes))
            return fc_usage(r->cmd, "--bits K is required with uint64 word files: the bits a "
                                    "row (pk pack printed it), as the padding counts as -1");
        *k = most;
        return 0;
    }
    if (pk_parse_int(opt, 0, INT64_MAX, k) != 0)
        return fc_usage(r->cmd, "--bits: expected a non-negative integer, got '%s'", opt);
    if (*k > most)
        return fc_file_error(r, a->bits <= b->bits ? a->file : b->file, "--bits %lld exceeds "
                             "the %lld bits its rows hold", (long long)*k, (long long)most);
    return 0;
}

static void free_bits(bitmat *b)
{
    free(b->owned);
    b->owned = NULL;
}

/* The inputs' bits and a note for the summary. */
static void bits_report(fc_report *rep, int64_t k)
{
    snprintf(rep->json, sizeof rep->json, ", \"bits\": %lld", (long long)k);
}

/* ---- pack ------------------------------------------------------------------ */

int pk_cmd_pack(int argc, char **argv, pk_cli_mode mode)
{
    fc_cmd c = {.name = "pack", .usage = pack_usage, .min_files = 1, .max_files = 1};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    if (!c.out) return fc_usage(&c, "-o BITS.npy is required");
    static const int pack_types[] = {PK_NPY_F32, PK_NPY_U8, PK_NPY_BOOL, -1};
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    const void *x;
    const pk_npy_header *h = fc_load(&r, c.files[0], &x);
    if (!h || fc_expect(&r, c.files[0], h, pack_types, 1, 2)) return fc_cleanup(&r, 1);
    if ((rc = fc_open_backend(&r))) return fc_cleanup(&r, rc);
    const int64_t rows = h->ndim == 2 ? h->shape[0] : 1, k = h->shape[h->ndim - 1];
    const int64_t words = pk_bits_words(k);
    const int64_t shape[2] = {rows, words};
    void *out;
    if ((rc = fc_create(&r, c.out, PK_NPY_U64, h->ndim, h->ndim == 2 ? shape : shape + 1, &out)))
        return fc_cleanup(&r, rc);
    const pk_bits_format fmt = h->type == PK_NPY_F32 ? PK_BITS_F32_SIGN : PK_BITS_U8;
    double t0 = fc_now();
    pk_status s = k == 0 ? PK_OK
                         : pk_bits_pack(r.ctx, fmt, rows, k, x, k, out, words);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0};
    if (s != PK_OK) return fc_cleanup(&r, fc_kernel_error(&r, s));
    rep.bytes = (double)h->data_bytes + 8.0 * (double)(rows * words);
    snprintf(rep.what, sizeof rep.what, "%s", fmt == PK_BITS_F32_SIGN ? "sign" : "nonzero");
    snprintf(rep.note, sizeof rep.note, "%lld bits a row (pass --bits %lld to pk bgemm)",
             (long long)k, (long long)k);
    bits_report(&rep, k);
    return fc_finish(&r, &rep, 0);
}

/* ---- bgemm, hamming ----------------------------------------------------- */

/* The two operands of bgemm and hamming and their bit count; 0, 1 or 2. */
static int load_two(fc_run *r, const char *bits_opt, int need_bits, bitmat *a, bitmat *b,
                    int64_t *k)
{
    int rc;
    memset(b, 0, sizeof *b);
    if ((rc = load_bits(r, r->cmd->files[0], a)) || (rc = load_bits(r, r->cmd->files[1], b)) ||
        (rc = resolve_bits(r, bits_opt, need_bits, a, b, k)) || (rc = fc_open_backend(r)))
        return rc;
    return 0;
}

static int finish_pair(fc_run *r, fc_report *rep, const bitmat *a, const bitmat *b, int64_t k,
                       double out_bytes, pk_status s)
{
    if (s != PK_OK) return fc_cleanup(r, fc_kernel_error(r, s));
    rep->ops = 2.0 * (double)a->rows * (double)b->rows * (double)k;
    rep->ops_unit = "tops";
    rep->bytes = 8.0 * (double)(a->rows + b->rows) * (double)a->ldw + out_bytes;
    snprintf(rep->note, sizeof rep->note, "%lld bits a row", (long long)k);
    bits_report(rep, k);
    return fc_finish(r, rep, 0);
}

int pk_cmd_bgemm(int argc, char **argv, pk_cli_mode mode)
{
    const char *bits = NULL;
    const fc_opt opts[] = {{"--bits", &bits, NULL, FC_ARG}, {0}};
    fc_cmd c = {.name = "bgemm", .usage = bgemm_usage, .opts = opts, .min_files = 2, .max_files = 2};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    if (!c.out) return fc_usage(&c, "-o C.npy is required");
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    bitmat a, b;
    int64_t k;
    void *C;
    if ((rc = load_two(&r, bits, 1, &a, &b, &k)) ||
        (rc = fc_create(&r, c.out, PK_NPY_I32, 2, (int64_t[]){a.rows, b.rows}, &C))) {
        free_bits(&a), free_bits(&b);
        return fc_cleanup(&r, rc);
    }
    double t0 = fc_now();
    pk_status s = pk_bgemm(r.ctx, a.rows, b.rows, k, a.words, a.ldw, b.words, b.ldw, C,
                           b.rows > 1 ? b.rows : 1);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0};
    snprintf(rep.what, sizeof rep.what, "+-1 product");
    rc = finish_pair(&r, &rep, &a, &b, k, 4.0 * (double)a.rows * (double)b.rows, s);
    free_bits(&a), free_bits(&b);
    return rc;
}

int pk_cmd_hamming(int argc, char **argv, pk_cli_mode mode)
{
    const char *bits = NULL, *dtype = NULL;
    const fc_opt opts[] = {{"--bits", &bits, NULL, FC_ARG}, {"--dtype", &dtype, NULL, FC_ARG},
                           {0}};
    fc_cmd c = {.name = "hamming", .usage = hamming_usage, .opts = opts, .min_files = 2,
                .max_files = 2};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    if (dtype && strcmp(dtype, "i32") != 0 && strcmp(dtype, "u16") != 0)
        return fc_usage(&c, "--dtype: expected i32 or u16, got '%s'", dtype);
    if (!c.out) return fc_usage(&c, "-o D.npy is required");
    const int u16 = dtype && strcmp(dtype, "u16") == 0;
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    bitmat q, x;
    int64_t k;
    void *D;
    if ((rc = load_two(&r, bits, 0, &q, &x, &k)) ||
        (rc = fc_create(&r, c.out, u16 ? PK_NPY_U16 : PK_NPY_I32, 2, (int64_t[]){q.rows, x.rows},
                        &D))) {
        free_bits(&q), free_bits(&x);
        return fc_cleanup(&r, rc);
    }
    double t0 = fc_now();
    pk_status s = pk_hamming(r.ctx, u16 ? PK_HAMMING_U16 : PK_HAMMING_I32, q.rows, x.rows, k, q.words,
                             q.ldw, x.words, x.ldw, D, x.rows > 1 ? x.rows : 1);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0};
    snprintf(rep.what, sizeof rep.what, "distances");
    rc = finish_pair(&r, &rep, &q, &x, k, (u16 ? 2.0 : 4.0) * (double)q.rows * (double)x.rows, s);
    free_bits(&q), free_bits(&x);
    return rc;
}

/* ---- knn ------------------------------------------------------------------ */

int pk_cmd_knn(int argc, char **argv, pk_cli_mode mode)
{
    const char *db = NULL, *queries = NULL, *topk_s = NULL, *dist = NULL, *bits = NULL;
    const fc_opt opts[] = {{"--db", &db, NULL, FC_IN},      {"--queries", &queries, NULL, FC_IN},
                           {"-k", &topk_s, NULL, FC_ARG},   {"--dist", &dist, NULL, FC_OUT},
                           {"--bits", &bits, NULL, FC_ARG}, {0}};
    fc_cmd c = {.name = "knn", .usage = knn_usage, .opts = opts, .min_files = 0, .max_files = 0};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    int64_t topk;
    if (!db || !queries) return fc_usage(&c, "--db CODES.npy and --queries Q.npy are required");
    if (!topk_s) return fc_usage(&c, "-k K is required (neighbours per query)");
    if (pk_parse_int(topk_s, 1, INT64_MAX, &topk) != 0)
        return fc_usage(&c, "-k: expected a positive integer, got '%s'", topk_s);
    if (!c.out) return fc_usage(&c, "-o IDS.npy is required");
    if (dist && !*dist) return fc_usage(&c, "--dist needs a file name");
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    c.files[0] = queries, c.files[1] = db; /* load_two's order: queries, database */
    bitmat q, x;
    int64_t k;
    int32_t *dbuf = NULL;
    void *ids, *d = NULL;
    if ((rc = load_two(&r, bits, 0, &q, &x, &k))) goto done;
    if (topk > x.rows) {
        rc = fc_file_error(&r, db, "-k %lld exceeds its %lld rows", (long long)topk,
                           (long long)x.rows);
        goto done;
    }
    const int64_t shape[2] = {q.rows, topk};
    if ((rc = fc_create(&r, c.out, PK_NPY_I64, 2, shape, &ids))) goto done;
    if (dist) rc = fc_create(&r, dist, PK_NPY_I32, 2, shape, &d);
    else if (!(d = dbuf = malloc((size_t)(q.rows * topk) * sizeof *dbuf + 4)))
        rc = fc_file_error(&r, c.out, "no memory for the distances");
    if (rc) goto done;
    double t0 = fc_now();
    pk_status s = pk_hamming_topk(r.ctx, q.rows, x.rows, k, q.words, q.ldw, x.words, x.ldw, topk,
                                  d, ids);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0};
    snprintf(rep.what, sizeof rep.what, "%lld nearest", (long long)topk);
    rc = finish_pair(&r, &rep, &q, &x, k, 12.0 * (double)q.rows * (double)topk, s);
    free_bits(&q), free_bits(&x);
    free(dbuf);
    return rc;
done:
    free_bits(&q), free_bits(&x);
    free(dbuf);
    return fc_cleanup(&r, rc);
}
