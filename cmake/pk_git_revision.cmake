# Writes OUT, a header defining PK__GIT_REVISION: `git describe --always
# --dirty` of the source tree SRC, or "unknown" outside a git checkout. Run
# at every build (target pk_git_revision); the file is rewritten only when
# the revision changes, so nothing recompiles otherwise.
set(rev unknown)
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND out)
    set(rev "${out}")
  endif()
endif()
set(text "#define PK__GIT_REVISION \"${rev}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
