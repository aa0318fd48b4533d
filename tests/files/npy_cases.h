/* .npy files that the reader must refuse (each with a piece of its reason)
 * or accept: the cases of test_npy (the reader itself) and test_cli_files
 * (every file command exits 1 on them and writes nothing). */
#ifndef PK_TEST_NPY_CASES_H
#define PK_TEST_NPY_CASES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct npy_case {
    const char *name;
    int version;        /* the major version byte (the minor is 0) */
    const char *header; /* the header text (H: with its length: NULs allowed) */
    size_t header_len;
    int64_t data_bytes; /* zero bytes after it */
    const char *expect; /* a piece of the error; NULL: the file is valid */
} npy_case;

#define H(text) text, sizeof(text) - 1

#define NPY_NUL_DESCR "{'descr': '\0f4', 'fortran_order': False, 'shape': (3,)}"
#define NPY_NUL_AFTER "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\0"
#define NPY_STD(descr, shape) H("{'descr': '" descr "', 'fortran_order': False, 'shape': " shape ", }\n")

static const npy_case npy_cases[] = {
    /* accepted: what NumPy writes and reads */
    {"numpy_v1", 1, NPY_STD("<f4", "(3,)"), 12, NULL},
    {"numpy_v2", 2, NPY_STD("<f8", "(2, 3)"), 48, NULL},
    {"numpy_v3", 3, NPY_STD("<i4", "(2, 3)"), 24, NULL},
    {"scalar", 1, NPY_STD("<u8", "()"), 8, NULL},
    {"empty", 1, NPY_STD("<f4", "(0, 5)"), 0, NULL},
    {"trailing_data", 1, NPY_STD("<f4", "(3,)"), 20, NULL},
    {"leading_newline", 1, H("\n {'descr': '<f4', 'fortran_order': False, 'shape': (3,)}"), 12, NULL},
    {"no_trailing_comma", 1, H("{'descr':'<f4','fortran_order':False,'shape':(3,4)}"), 48, NULL},
    {"key_order", 1, H("{'shape': (3,), 'descr': '<f4', 'fortran_order': False}\r\n\t\f"), 12, NULL},
    {"double_quotes", 1, H("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}"), 12, NULL},
    {"python2_long", 1, NPY_STD("<f4", "(3L, 2L)"), 24, NULL},
    {"native_order", 1, NPY_STD("=f4", "(3,)"), 12, NULL},
    {"no_order", 1, NPY_STD("f8", "(3,)"), 24, NULL},
    {"numpy_name", 1, NPY_STD("float32", "(3,)"), 12, NULL},
    {"big_endian_byte", 1, NPY_STD(">u1", "(3,)"), 3, NULL},
    {"bool", 1, NPY_STD("|b1", "(3,)"), 3, NULL},
    {"u16", 1, NPY_STD("<u2", "(3,)"), 6, NULL},
    {"fortran_1d", 1, H("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }"), 12, NULL},
    {"fortran_one_wide", 1, H("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3, 1), }"), 12, NULL},
    {"trailing_comma_tuple", 1, NPY_STD("<f4", "(1, 3,)"), 12, NULL},
    {"minus_zero", 1, NPY_STD("<f4", "(-0, 3)"), 0, NULL},

    /* refused */
    {"version_4", 4, NPY_STD("<f4", "(3,)"), 12, "unsupported .npy format version 4.0"},
    {"version_0", 0, NPY_STD("<f4", "(3,)"), 12, "unsupported .npy format version 0.0"},
    {"not_a_dict", 1, H("[1, 2]"), 0, "expected '{'"},
    {"empty_header", 1, H(""), 0, "it ends where '{'"},
    {"unterminated_dict", 1, H("{'descr': '<f4', 'fortran_order': False"), 0, "',' or '}'"},
    {"no_shape", 1, H("{'descr': '<f4', 'fortran_order': False}"), 0, "has no 'shape'"},
    {"no_descr", 1, H("{'fortran_order': False, 'shape': (3,)}"), 0, "has no 'descr'"},
    {"no_fortran", 1, H("{'descr': '<f4', 'shape': (3,)}"), 0, "has no 'fortran_order'"},
    {"extra_key", 1, H("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}"), 12,
     "unexpected key 'x'"},
    {"duplicate_key", 1, H("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}"),
     12, "'descr' twice"},
    {"descr_not_string", 1, H("{'descr': 3, 'fortran_order': False, 'shape': (3,)}"), 12,
     "a dtype string"},
    {"structured", 1, H("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}"), 12,
     "structured dtype"},
    {"object", 1, NPY_STD("|O", "(3,)"), 24, "object array"},
    {"float16", 1, NPY_STD("<f2", "(3,)"), 6, "unsupported dtype '<f2'"},
    {"complex", 1, NPY_STD("<c8", "(3,)"), 24, "unsupported dtype '<c8'"},
    {"unicode", 1, NPY_STD("<U5", "(3,)"), 60, "unsupported dtype '<U5'"},
    {"int8", 1, NPY_STD("|i1", "(3,)"), 3, "unsupported dtype '|i1'"},
    {"empty_descr", 1, NPY_STD("", "(3,)"), 3, "unsupported dtype ''"},
    {"nul_in_descr", 1, H(NPY_NUL_DESCR), 12, "unsupported dtype '?f4'"},
    {"big_endian_f4", 1, NPY_STD(">f4", "(3,)"), 12, "big-endian dtype '>f4'"},
    {"big_endian_i8", 3, NPY_STD(">i8", "(3,)"), 24, "big-endian dtype '>i8'"},
    {"fortran_2d", 1, H("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }"), 48,
     "Fortran-order"},
    {"fortran_not_bool", 1, H("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }"), 12,
     "True or False"},
    {"fortran_lowercase", 1, H("{'descr': '<f4', 'fortran_order': false, 'shape': (3,), }"), 12,
     "True or False"},
    {"shape_list", 1, NPY_STD("<f4", "[3]"), 12, "'(' opening the shape"},
    {"shape_int", 1, NPY_STD("<f4", "3"), 12, "'(' opening the shape"},
    {"shape_parenthesized_int", 1, NPY_STD("<f4", "(3)"), 12, "is not a tuple"},
    {"shape_negative", 1, NPY_STD("<f4", "(-3,)"), 12, "negative dimension -3"},
    {"shape_float", 1, NPY_STD("<f4", "(3.5,)"), 12, "',' or ')' in the shape"},
    {"shape_leading_zero", 1, NPY_STD("<f4", "(03,)"), 12, "without leading zeros"},
    {"shape_hex", 1, NPY_STD("<f4", "(0x3,)"), 12, "decimal integer"},
    {"shape_underscore", 1, NPY_STD("<f4", "(1_0,)"), 40, "decimal integer"},
    {"shape_bool", 1, NPY_STD("<f4", "(True, 3)"), 12, "an integer dimension"},
    {"shape_nested", 1, NPY_STD("<f4", "((3,),)"), 12, "an integer dimension"},
    {"shape_double_comma", 1, NPY_STD("<f4", "(3,,)"), 12, "an integer dimension"},
    {"shape_unclosed", 1, H("{'descr': '<f4', 'fortran_order': False, 'shape': (3,"), 12,
     "an integer dimension"},
    {"shape_too_large", 1, NPY_STD("<f4", "(99999999999999999999,)"), 12, "too large"},
    {"shape_int64_max_plus_1", 1, NPY_STD("<u1", "(9223372036854775808,)"), 12, "too large"},
    {"shape_overflow", 1, NPY_STD("<f4", "(4611686018427387904, 4)"), 12, "overflows"},
    {"shape_overflow_itemsize", 1, NPY_STD("<f8", "(2305843009213693952,)"), 12, "overflows"},
    {"zero_dim_huge", 1, NPY_STD("<f4", "(0, 9223372036854775807)"), 0, "overflows"},
    {"shape_overflow_with_zero", 1, NPY_STD("<f4", "(0, 4294967296, 4294967296)"), 0, "overflows"},
    {"long_suffix_v3", 3, NPY_STD("<f4", "(3L,)"), 12, "decimal integer"},
    {"text_after_dict", 1, H("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x"), 12,
     "nothing but whitespace"},
    {"comment", 1, H("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} # hi"), 12,
     "nothing but whitespace"},
    {"nul_after_dict", 1, H(NPY_NUL_AFTER), 12, "nothing but whitespace"},
    {"unterminated_string", 1, H("{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}"), 12,
     "unexpected key 'descr: '"},
    {"string_to_end", 1, H("{'descr"), 0, "closing quote"},
    {"escape_in_string", 1, H("{'de\\scr': '<f4', 'fortran_order': False, 'shape': (3,)}"), 12,
     "without escapes"},
    {"missing_colon", 1, H("{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}"), 12,
     "':' after a key"},
    {"missing_comma", 1, H("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}"), 12,
     "',' or '}'"},
    {"unquoted_key", 1, H("{descr: '<f4', 'fortran_order': False, 'shape': (3,)}"), 12,
     "a quoted key"},
    {"vertical_tab", 1, H("{'descr': '<f4',\v'fortran_order': False, 'shape': (3,)}"), 12,
     "a quoted key"},
    {"truncated_data", 1, NPY_STD("<f4", "(3,)"), 11, "the shape needs 12 bytes of data, the file has 11"},
    {"truncated_data_2d", 2, NPY_STD("<f8", "(1000, 1000)"), 64, "needs 8000000 bytes"},
};
#define NPY_NCASES (int)(sizeof npy_cases / sizeof *npy_cases)

/* The whole file of a case: preamble, header text, zero data. Caller
 * frees; *len set. */
static inline unsigned char *npy_case_file(const npy_case *c, size_t *len)
{
    const size_t hlen = c->header_len;
    const size_t pre = c->version == 1 || c->version == 0 ? 10 : 12;
    *len = pre + hlen + (size_t)c->data_bytes;
    unsigned char *f = calloc(*len + 1, 1);
    if (!f) return NULL;
    memcpy(f, "\x93NUMPY", 6);
    f[6] = (unsigned char)c->version;
    for (size_t i = 0; i < pre - 8; i++) f[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(f + pre, c->header, hlen);
    return f;
}

/* Raw files that are not even a header (each refused). */
typedef struct npy_raw_case {
    const char *name;
    const char *bytes;
    size_t len;
    const char *expect;
} npy_raw_case;

static const npy_raw_case npy_raw_cases[] = {
    {"bad_magic", "\x93NUMPX\x01\x00\x00\x00", 10, "not a .npy file"},
    {"text_file", "hello, world\n", 13, "not a .npy file"},
    {"short_magic", "\x93NUM", 4, "truncated: 4 bytes"},
    {"no_length", "\x93NUMPY\x01\x00\x10", 9, "truncated: 9 bytes"},
    {"v2_short_length", "\x93NUMPY\x02\x00\x10\x00\x00", 11, "shorter than a version 2 preamble"},
    {"version_1_1", "\x93NUMPY\x01\x01\x00\x00", 10, "unsupported .npy format version 1.1"},
    {"header_past_end", "\x93NUMPY\x01\x00\xff\x00{}", 12, "the header length 255 runs past"},
    {"v2_header_4g", "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14,
     "the header length 4294967295 runs past"},
};
#define NPY_NRAW (int)(sizeof npy_raw_cases / sizeof *npy_raw_cases)

#endif
