# Fails when a file of an analyzer folder includes a header of a folder it
# may not use (README.md, "Layout"); run at build time by
# iotap_stage_includes in CMakeLists.txt, so that a wrong include fails the
# build even where the linker cannot see it (inline and header-only code).
#
#   cmake -DFOLDER=read -DALLOWED="read;base" -DTEST_ALLOWED="testing"
#         -DFILES="a.cc;a.h;a_test.cc" -DSTAMP=out.stamp -P check_includes.cmake
#
# Production files may include ALLOWED folders; test files (*_test.cc) also
# TEST_ALLOWED ones; fuzzers drive a reader through everything above it and
# are not checked.
cmake_minimum_required(VERSION 3.25)
set(problems "")
foreach(file IN LISTS FILES)
  if(file MATCHES "_fuzzer\\.cc$")
    continue()
  endif()
  set(allowed ${ALLOWED})
  if(file MATCHES "_test\\.cc$")
    list(APPEND allowed ${TEST_ALLOWED})
  endif()
  file(STRINGS "${file}" includes REGEX "^#include \"analyzer/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"analyzer/(.*)/[^/]+\".*$" "\\1" folder "${line}")
    if(NOT folder IN_LIST allowed)
      string(APPEND problems "${file}: ${line}: analyzer/${FOLDER}/ may not use "
                             "analyzer/${folder}/ (README.md, Layout)\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "${problems}")
endif()
file(WRITE "${STAMP}" "")
