# Linux: one addon file for every glibc >= 2.28 (Debian 10, RHEL 8, Ubuntu 20.04).
# libstdc++ and libgcc are linked in statically, with their symbols kept out of the
# addon's exports (another addon in the process may bring its own libstdc++), and
# the few glibc functions whose default version is newer than 2.28 are bound to
# their older versions (bindings/glibc_compat.cc). Sanitizer builds keep the
# defaults. The source build at `npm install` and the prebuild both come here.
include(CheckCXXSourceCompiles)

option(LOADGEN_PORTABLE_LINK "Linux: static libstdc++/libgcc, glibc >= 2.28 symbol versions" ON)

function(loadgen_portable_link target)
  if(NOT LOADGEN_PORTABLE_LINK OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR LOADGEN_SANITIZE OR MSVC)
    return()
  endif()
  set(CMAKE_REQUIRED_LINK_OPTIONS -static-libstdc++ -static-libgcc)
  check_cxx_source_compiles("#include <string>\nint main() { return static_cast<int>(std::to_string(1).size()); }"
                            LOADGEN_HAS_STATIC_LIBSTDCXX)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT LOADGEN_HAS_STATIC_LIBSTDCXX)
    message(STATUS "loadgen: no static libstdc++ here; the addon links the system's shared libstdc++")
    return()
  endif()
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL)

  check_cxx_source_compiles("#include <features.h>\n#ifndef __GLIBC__\n#error not glibc\n#endif\nint main() { return 0; }"
                            LOADGEN_IS_GLIBC)
  if(NOT LOADGEN_IS_GLIBC)
    return()
  endif()
  target_compile_definitions(${target} PRIVATE LOADGEN_GLIBC_COMPAT=1)
  # The functions bindings/glibc_compat.cc defines as __wrap_<name>.
  foreach(fn pthread_create pthread_join pthread_detach pthread_once pthread_key_create __pthread_key_create
             pthread_key_delete pthread_getspecific pthread_setspecific pthread_setaffinity_np
             pthread_setname_np pthread_getname_np
             exp log pow stat lstat fstat64 pthread_cond_clockwait arc4random _dl_find_object)
    target_link_options(${target} PRIVATE -Wl,--wrap=${fn})
  endforeach()
endfunction()
