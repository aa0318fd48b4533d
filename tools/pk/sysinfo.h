/* What the pk command reports about the host CPU: model, topology, caches,
 * the SIMD paths it supports. Read from /proc/cpuinfo and /sys. */
#ifndef PK_SYSINFO_H
#define PK_SYSINFO_H

#include <stdint.h>

#define PK_MAX_CACHES 8

typedef struct pk_cache_info {
    int level;
    char type[16];     /* "Data", "Instruction", "Unified" */
    int64_t size;      /* bytes */
    int line;          /* bytes; 0 unknown */
    int shared_cpus;   /* logical CPUs sharing one instance; 0 unknown */
} pk_cache_info;

typedef struct pk_sysinfo {
    char model[128];
    int logical_cpus;  /* online */
    int cores;         /* physical cores (distinct package/core ids) */
    int sockets;
    int ncaches;
    pk_cache_info caches[PK_MAX_CACHES];
    int64_t mem_bytes; /* physical memory */
} pk_sysinfo;

void pk_sysinfo_read(pk_sysinfo *s);

/* The SIMD paths pk has, best first, and whether this CPU supports them. */
extern const char *const pk_isa_names[];
extern const int pk_isa_count;
int pk_isa_supported(const char *name);

#endif
