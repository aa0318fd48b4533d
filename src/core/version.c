/* The version and build queries of pk.h: pk_version, pk_has_feature,
 * pk_feature_name, pk_build_config. The facts come from CMake
 * (cmake/pk_build_info.h.in) and the git revision from the last build
 * (cmake/pk_git_revision.cmake). */
#include "internal.h"

#include "pk_build_info.h"
#include "pk_git_revision.h"

#define PK__STR2(x) #x
#define PK__STR(x) PK__STR2(x)
#define PK__VERSION_TEXT \
    PK__STR(PK_VERSION_MAJOR) "." PK__STR(PK_VERSION_MINOR) "." PK__STR(PK_VERSION_PATCH)

const char *pk_version(void) { return PK__VERSION_TEXT; }

/* One row per feature: its name and whether this build has it. */
static const struct {
    const char *name;
    int built;
} features[PK_FEATURE_COUNT] = {
    [PK_FEATURE_CUDA] = {"cuda", PK__BUILD_HAS_CUDA},
    /* NVRTC is dlopen'ed by the CUDA backend: built in with it. */
    [PK_FEATURE_NVRTC] = {"nvrtc", PK__BUILD_HAS_CUDA},
    [PK_FEATURE_MPI] = {"mpi", PK__BUILD_HAS_MPI},
    [PK_FEATURE_NCCL] = {"nccl", PK__BUILD_HAS_NCCL},
};

int pk_has_feature(pk_feature f)
{
    return (unsigned)f < PK_FEATURE_COUNT ? features[f].built : 0;
}

const char *pk_feature_name(pk_feature f)
{
    return (unsigned)f < PK_FEATURE_COUNT ? features[f].name : "?";
}

const char *pk_build_config(void)
{
    return "version=" PK__VERSION_TEXT "\n"
           "git=" PK__GIT_REVISION "\n"
           "compiler=" PK__BUILD_COMPILER "\n"
           "build_type=" PK__BUILD_TYPE "\n"
           "openmp=" PK__BUILD_OPENMP "\n"
           "cuda=" PK__BUILD_CUDA "\n"
           "cuda_arch=" PK__BUILD_CUDA_ARCH "\n"
           "nvrtc=" PK__BUILD_CUDA_NVRTC "\n"
           "mpi=" PK__BUILD_MPI "\n"
           "nccl=" PK__BUILD_NCCL "\n";
}
