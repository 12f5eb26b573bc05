# Writes the build's identity (native/version_info.cc.in) into OUT: run by
# native/CMakeLists.txt at configure time and again before every build, so
# an incremental build (cmake-js compile reuses its configured tree) names
# the revision and sources it was built from, not those of its first
# configure. The file is rewritten, with new build dates, only when the
# identity changed (version, revision, status, a source's SHA-1): a build
# with nothing new recompiles nothing.
#   cmake -DLOADGEN_SOURCE_ROOT=<repo> -DIN=<version_info.cc.in> -DOUT=<file> -P version_info.cmake
cmake_minimum_required(VERSION 3.16)

set(LOADGEN_VERSION "0.0.0")
if(EXISTS ${LOADGEN_SOURCE_ROOT}/package.json)
  file(READ ${LOADGEN_SOURCE_ROOT}/package.json _package_json)
  string(REGEX MATCH "\"version\"[ \t]*:[ \t]*\"([^\"]+)\"" _ "${_package_json}")
  if(CMAKE_MATCH_1)
    set(LOADGEN_VERSION ${CMAKE_MATCH_1})
  endif()
endif()

set(LOADGEN_GIT_REV "NA")
set(LOADGEN_GIT_COMMIT_DATE "NA")
set(LOADGEN_GIT_LOG_MESSAGE "NA")
set(LOADGEN_GIT_STATUS "NA")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${LOADGEN_SOURCE_ROOT}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD WORKING_DIRECTORY ${LOADGEN_SOURCE_ROOT}
                  OUTPUT_VARIABLE _rev RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0 AND _rev)
    set(LOADGEN_GIT_REV ${_rev})
    execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%cI WORKING_DIRECTORY ${LOADGEN_SOURCE_ROOT}
                    OUTPUT_VARIABLE LOADGEN_GIT_COMMIT_DATE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%h\ %s WORKING_DIRECTORY ${LOADGEN_SOURCE_ROOT}
                    OUTPUT_VARIABLE LOADGEN_GIT_LOG_MESSAGE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain -- native bindings
                    WORKING_DIRECTORY ${LOADGEN_SOURCE_ROOT}
                    OUTPUT_VARIABLE LOADGEN_GIT_STATUS OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
endif()

file(GLOB _hashed ${LOADGEN_SOURCE_ROOT}/native/*.h ${LOADGEN_SOURCE_ROOT}/native/*.cc ${LOADGEN_SOURCE_ROOT}/native/*.in
     ${LOADGEN_SOURCE_ROOT}/bindings/*.h ${LOADGEN_SOURCE_ROOT}/bindings/*.cc)
list(SORT _hashed)
set(LOADGEN_FILE_SHA1_JSON "")
foreach(_file ${_hashed})
  file(SHA1 ${_file} _sha1)
  file(RELATIVE_PATH _rel ${LOADGEN_SOURCE_ROOT} ${_file})
  if(LOADGEN_FILE_SHA1_JSON)
    string(APPEND LOADGEN_FILE_SHA1_JSON ",")
  endif()
  string(APPEND LOADGEN_FILE_SHA1_JSON "\"/${_rel}\":\"${_sha1}\"")
endforeach()
set(LOADGEN_FILE_SHA1_JSON "{${LOADGEN_FILE_SHA1_JSON}}")

# Everything but the build dates, as one digest kept in the file's first line.
file(SHA1 ${IN} _template_sha1)
string(SHA1 _identity "${_template_sha1}|${LOADGEN_VERSION}|${LOADGEN_GIT_REV}|${LOADGEN_GIT_COMMIT_DATE}|${LOADGEN_GIT_LOG_MESSAGE}|${LOADGEN_GIT_STATUS}|${LOADGEN_FILE_SHA1_JSON}")
set(_marker "// identity ${_identity}")
if(EXISTS ${OUT})
  file(STRINGS ${OUT} _first LIMIT_COUNT 1)
  if("${_first}" STREQUAL "${_marker}")
    return()
  endif()
endif()
string(TIMESTAMP LOADGEN_BUILD_DATE_LOCAL "%Y-%m-%dT%H:%M:%S")
string(TIMESTAMP LOADGEN_BUILD_DATE_UTC "%Y-%m-%dT%H:%M:%S" UTC)
configure_file(${IN} ${OUT}.tmp @ONLY)
file(READ ${OUT}.tmp _body)
file(WRITE ${OUT} "${_marker}\n${_body}")
file(REMOVE ${OUT}.tmp)
