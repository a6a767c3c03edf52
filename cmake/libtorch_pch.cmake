# LibTorch's umbrella header, precompiled once (by streetgan_core) and reused by every target that
# compiles LibTorch code. The precompiled header is about 700 MB: loading it costs a few seconds
# per source even where nothing of LibTorch is used, more than such a source takes to compile on
# its own. So a source gets it only when LibTorch's headers are among its includes, directly or
# through the project's own headers (found by reading them, at the end of the target's folder, so
# that sources added later count too); every other source compiles without it.
#
#   streetgan_libtorch_pch(TARGET)  TARGET compiles with the precompiled LibTorch header
#
# A source must include what it uses: the precompiled header is a speed-up, never an include.
# The choice is made when CMake configures: a source that stops including LibTorch keeps the
# header until then, and a new build folder (CI's) compiles it without. In an include cycle a
# source may be judged without LibTorch and compile without the header, slower but correctly.

# The headers that make a source worth the precompiled header: LibTorch's own. c10's alone (a
# device, an exception type) compile quickly without it.
set(STREETGAN_LIBTORCH_INCLUDE_REGEX "^(torch|ATen|caffe2)/")
# LibTorch's headers that include little of it (a device count, the version, at::parallel_for's
# thread settings): a source that includes only these compiles in a second without the header and
# in 20 with it.
set(STREETGAN_LIBTORCH_LIGHT_HEADERS "torch/cuda.h" "torch/version.h" "ATen/Parallel.h")

# _streetgan_reaches_libtorch(FILE OUT): whether FILE (absolute) includes LibTorch, directly or
# through the project's headers ("core/…" and the like, written from the repository root).
# Answers are kept per file for the whole configure run.
function(_streetgan_reaches_libtorch file out)
  get_property(known GLOBAL PROPERTY "_streetgan_libtorch_${file}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "_streetgan_libtorch_${file}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  # A header that includes itself through others is not LibTorch on that path.
  set_property(GLOBAL PROPERTY "_streetgan_libtorch_${file}" OFF)
  set(answer OFF)
  if(EXISTS "${file}")
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*" "\\1" included "${line}")
      if(included MATCHES "${STREETGAN_LIBTORCH_INCLUDE_REGEX}" AND NOT included IN_LIST STREETGAN_LIBTORCH_LIGHT_HEADERS)
        set(answer ON)
        break()
      endif()
      if(EXISTS "${PROJECT_SOURCE_DIR}/${included}" AND NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${included}")
        _streetgan_reaches_libtorch("${PROJECT_SOURCE_DIR}/${included}" through)
        if(through)
          set(answer ON)
          break()
        endif()
      endif()
    endforeach()
  endif()
  set_property(GLOBAL PROPERTY "_streetgan_libtorch_${file}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# Marks the target's C++ sources that never reach LibTorch with SKIP_PRECOMPILE_HEADERS.
function(_streetgan_skip_pch_without_libtorch target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    _streetgan_reaches_libtorch("${path}" reaches)
    if(NOT reaches)
      set_property(SOURCE "${source}" TARGET_DIRECTORY ${target} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

function(streetgan_libtorch_pch target)
  if(target STREQUAL "streetgan_core")
    target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  else()
    target_precompile_headers(${target} REUSE_FROM streetgan_core)
  endif()
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _streetgan_skip_pch_without_libtorch [[${target}]])")
endfunction()
