/* A small JSON reader (RFC 8259) for the pk command: `pk bench compare`
 * reads `pk bench --json` documents back. Whole documents in memory; numbers
 * as doubles; nesting limited to 64 levels; errors name the line. */
#ifndef PK_JSON_READER_H
#define PK_JSON_READER_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json {
    json_type type;
    int boolean;
    double num;
    char *str;          /* JSON_STR (UTF-8, NUL-terminated) */
    struct json *items; /* JSON_ARR and JSON_OBJ: n values */
    char **keys;        /* JSON_OBJ: n keys */
    int n;
} json;

/* Parse text[0, len) as one JSON value; NULL on error, with the reason and
 * its line in err. */
json *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(json *v);
/* The value of key in an object (the first, if repeated); NULL when v is
 * not an object or has no such key. */
const json *json_get(const json *v, const char *key);
/* A string's text, or NULL; a number, or NAN. */
const char *json_str(const json *v);
double json_num(const json *v);

#endif
