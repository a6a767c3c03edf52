# The include rules of docs/architecture.md, checked on every source file of the project.
#   cmake -DSOURCE_DIR=<repository> [-DQTCORE_INCLUDE_DIR=<Qt's QtCore folder>] -P check_layering.cmake
# Without QTCORE_INCLUDE_DIR (a build without Qt) the Qt-Core-only rule of the controllers is
# not checked; every other rule is.
# Prints one line per broken rule (file, include, the rule) and fails; prints nothing and
# succeeds when every include keeps them. Run by the `check_layering` build step and by
# tests/layering (tst_layering), which shows each rule failing on a copy of the tree.
cmake_minimum_required(VERSION 3.24)

if(NOT SOURCE_DIR OR NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "check_layering: give -DSOURCE_DIR=<the repository folder>")
endif()

# Who may include whom: "FROM=ALLOWED …". FROM is a folder, or one unit (a path without its
# extension); the longest FROM that matches a file is its rule. ALLOWED are folder prefixes.
set(_rules
  "core/util="
  "core/config=core/util"
  "core/model=core/util"
  "core/data=core/util core/config"
  "core/video=core/util"
  "core/runs=core/util"
  "core/eval=core/util core/config core/model core/data"
  "core/train=core/util core/config core/model core/data core/eval core/runs"
  "core/latent=core/util core/config core/model core/data core/video"
  # LatentExplorer opens a generator from a training checkpoint on a chosen device: the one unit
  # of core above train.
  "core/latent/latent_explorer=core/util core/config core/model core/data core/video core/latent core/train"
  "widgets=core"
  "app/studio/control=core"
  "app/studio=core widgets"
  "app/cli=core"
  "tests=core widgets app tests"
)
# Folders whose files may include libav's internals (core/video/internal/).
set(_libav_internal_users "core/video" "tests/support")
# Where no Qt header may appear, and where only Qt Core's may.
set(_no_qt "core" "app/cli")
set(_qt_core_only "app/studio/control")
# Views and tabs never start processes: the controllers of app/studio/control do.
set(_no_processes "widgets" "app/studio")

set(_failures "")
macro(_fail text)
  string(APPEND _failures "${text}\n")
endmacro()

# True when `path` is `prefix` itself, inside the folder `prefix`, or the unit `prefix` (any extension).
function(_under path prefix out)
  string(LENGTH "${prefix}" _n)
  string(SUBSTRING "${path}" 0 ${_n} _head)
  set(_yes FALSE)
  if(_head STREQUAL prefix)
    string(LENGTH "${path}" _len)
    if(_len EQUAL _n)
      set(_yes TRUE)
    else()
      string(SUBSTRING "${path}" ${_n} 1 _next)
      if(_next STREQUAL "/" OR _next STREQUAL ".")
        set(_yes TRUE)
      endif()
    endif()
  endif()
  set(${out} ${_yes} PARENT_SCOPE)
endfunction()

function(_under_any path prefixes out)
  set(_yes FALSE)
  foreach(_p IN LISTS prefixes)
    _under("${path}" "${_p}" _u)
    if(_u)
      set(_yes TRUE)
    endif()
  endforeach()
  set(${out} ${_yes} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE _files RELATIVE "${SOURCE_DIR}" LIST_DIRECTORIES false
  "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp"
  "${SOURCE_DIR}/widgets/*.h" "${SOURCE_DIR}/widgets/*.cpp"
  "${SOURCE_DIR}/app/*.h" "${SOURCE_DIR}/app/*.cpp"
  "${SOURCE_DIR}/tests/*.h" "${SOURCE_DIR}/tests/*.cpp")
list(SORT _files)

foreach(_file IN LISTS _files)
  # The rule of this file: the longest FROM it is under.
  set(_from "")
  set(_allowed "")
  foreach(_rule IN LISTS _rules)
    string(FIND "${_rule}" "=" _eq)
    string(SUBSTRING "${_rule}" 0 ${_eq} _key)
    math(EXPR _rest "${_eq} + 1")
    string(SUBSTRING "${_rule}" ${_rest} -1 _value)
    _under("${_file}" "${_key}" _match)
    string(LENGTH "${_key}" _key_len)
    string(LENGTH "${_from}" _from_len)
    if(_match AND _key_len GREATER _from_len)
      set(_from "${_key}")
      string(REPLACE " " ";" _allowed "${_value}")
    endif()
  endforeach()
  if(_from STREQUAL "" OR _from STREQUAL "core")
    _fail("${_file}: not in a domain folder of core/ (docs/architecture.md lists them)")
    continue()
  endif()
  list(APPEND _allowed "${_from}")

  file(STRINGS "${SOURCE_DIR}/${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]*)[>\"].*$" "\\1;\\2" _parsed "${_line}")
    list(GET _parsed 0 _kind)
    list(GET _parsed 1 _inc)
    string(REGEX MATCH "^(core|widgets|app|tests)/" _ours "${_inc}")
    if(_ours)
      if(NOT EXISTS "${SOURCE_DIR}/${_inc}")
        _fail("${_file}: includes ${_inc}, which does not exist")
      endif()
      _under_any("${_inc}" "${_allowed}" _ok)
      if(NOT _ok)
        string(REPLACE ";" ", " _list "${_allowed}")
        _fail("${_file}: includes ${_inc}, but ${_from} may include only ${_list}")
      endif()
      _under("${_inc}" "core/video/internal" _internal)
      _under_any("${_file}" "${_libav_internal_users}" _may_internal)
      if(_internal AND NOT _may_internal)
        _fail("${_file}: includes ${_inc}, a libav internal of core/video that only core/video uses")
      endif()
    elseif(_kind STREQUAL "\"" AND NOT _inc MATCHES "\\.moc$")
      _fail("${_file}: includes \"${_inc}\" without its layer; write it from the repository root (e.g. core/util/result.h)")
    elseif(_kind STREQUAL "<" AND _inc MATCHES "^Q")
      _under_any("${_file}" "${_no_qt}" _qt_banned)
      _under_any("${_file}" "${_qt_core_only}" _core_only)
      _under_any("${_file}" "${_no_processes}" _no_proc)
      if(_qt_banned)
        _fail("${_file}: includes <${_inc}>, but core and the CLI have no Qt")
      elseif(_core_only)
        if(NOT QTCORE_INCLUDE_DIR)
          # A build without Qt (STREETGAN_CLI_ONLY) has no QtCore folder to compare with and
          # builds no controller; the full build and tst_layering check this rule.
          set(_in_core TRUE)
        elseif(_inc MATCHES "^Qt[A-Za-z0-9]*/")
          string(REGEX REPLACE "/.*" "" _module "${_inc}")
          set(_in_core FALSE)
          if(_module STREQUAL "QtCore")
            set(_in_core TRUE)
          endif()
        elseif(EXISTS "${QTCORE_INCLUDE_DIR}/${_inc}")
          set(_in_core TRUE)
        else()
          set(_in_core FALSE)
        endif()
        if(NOT _in_core)
          _fail("${_file}: includes <${_inc}>, which is not Qt Core; ${_from} uses Qt Core only")
        endif()
      endif()
      if(_no_proc AND NOT _core_only AND _inc MATCHES "^(QtCore/)?QProcess$")
        _fail("${_file}: includes <${_inc}>, but views and tabs never start processes (a controller in app/studio/control does)")
      endif()
    endif()
  endforeach()
endforeach()

if(_failures)
  message("${_failures}")
  message(FATAL_ERROR "check_layering: the include rules of docs/architecture.md are broken (above)")
endif()
