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
  # File formats read without their programs (pickle, zip, torch.save, LibTorch's archive check).
  "core/formats=core/util"
  # The ranks of a distributed run: their placement, sign-in, store and collectives.
  "core/distributed=core/util"
  # The quality suite's results are the run folder's evaluation files (core/runs); TorchScript
  # networks are checked as LibTorch archives (core/formats) before LibTorch reads them.
  "core/eval=core/util core/config core/model core/data core/runs core/formats"
  "core/train=core/util core/config core/model core/data core/eval core/runs core/formats core/distributed"
  # The original tool's checkpoints in, generators for PyTorch out: over the trainer's checkpoints.
  "core/interop=core/util core/config core/model core/data core/runs core/formats core/train"
  # Directions as NumPy files: core/formats/npy_array.
  "core/latent=core/util core/config core/model core/data core/video core/formats core/runs/run_directory"
  # LatentExplorer opens a generator from a training checkpoint on a chosen device: the one unit
  # of core above train.
  "core/latent/latent_explorer=core/util core/config core/model core/data core/video core/latent core/train"
  # LatentProjector minimises (1 − MS-SSIM): it uses the metric's own differentiable form.
  "core/latent/latent_projector=core/util core/config core/model core/data core/video core/latent core/eval core/runs/run_directory"
  "widgets=core"
  "app/studio/control=core"
  "app/studio=core widgets"
  # The gallery library of `streetgan serve`: its renderer, HTTP server and page, over core.
  "app/serve=core"
  "app/cli=core app/serve"
  "tests=core widgets app tests"
)
# Folders whose files may include libav's internals (core/video/internal/).
set(_libav_internal_users "core/video" "tests/support")
# System libraries that belong to one part of the tree: "REGEX=WHERE …", the regex matched against
# the name inside <…>, WHERE folders or units. Anywhere else the include is refused.
set(_system_headers
  # FFmpeg's libraries: the video encoder alone (and the tests' decoder of what it wrote).
  "^lib(av[a-z]*|sw[a-z]*|postproc)/=core/video tests/support/decoded_video"
  # LibTorch: the engine, the CLI and the gallery; never a view, a tab or a controller.
  "^(torch|ATen|c10|caffe2)/=core app/cli app/serve tests/core tests/cli tests/support/test_device tests/support/python_reference"
  # OpenCV: image decoding and pixels, and the one message of its exceptions.
  "^opencv2?/=core/data core/util/exception_message tests/core"
  # cpp-httplib: the gallery's HTTP server.
  "^httplib\\.h$=app/serve"
)
# Where no Qt header may appear, and where only Qt Core's may.
set(_no_qt "core" "app/cli" "app/serve")
set(_qt_core_only "app/studio/control")
# Views and tabs never start processes: the controllers of app/studio/control do.
set(_no_processes "widgets" "app/studio")
# Files are written through their owners, which follow no link and leave nothing half-written: a
# whole file through AtomicFile, a run's events.jsonl through EventLog, and so on. Outside these
# units (tests aside: they craft files), a raw way to open a file for writing (std::ofstream,
# fopen, fdopen or freopen for writing, creat, open with O_CREAT, O_WRONLY or O_RDWR, a QIODevice
# opened to write, copy_file, cv::imwrite, torch::save) is refused, so a new writer of a run's
# files cannot skip the owners' checks. (A mode held in a variable is not seen: text, not code.)
set(_file_writers
  "core/util/atomic_file"           # every file written whole: a temporary, then renamed over
  "core/runs/event_log"             # a run's events.jsonl, appended, never through a link
  "core/runs/tensorboard_writer"    # TensorBoard's event files, created in the run's own folder
  "core/runs/run_launch"            # a detached run's launch/ records and its stderr
  "core/video/video_encoder"        # libav's output file, the user's --out
  # /dev/null, for a standard stream that was closed and for the features worker's output.
  "app/cli/main" "core/eval/features_worker_process"
  # The studio, through QSaveFile (Qt's AtomicFile): the local copy of a remote run, its record
  # and the profile's known_hosts; and the files a person saves from a view (a PNG, a CSV).
  "app/studio/control/remote_run_transport" "app/studio/control/remote_run_record"
  "app/studio/control/host_key_check"
  "app/studio/main" "app/studio/compare_view" "app/studio/quality_table"
  "widgets/chart_panel" "widgets/sigma_curve_chart")
set(_file_write_regex "std::(basic_)?o?fstream|[^A-Za-z_](fopen|fdopen|freopen)[ \t]*\\([^,]*,[ \t]*\"[^\"]*[wa+]|[^A-Za-z_]creat[ \t]*\\(|O_CREAT|O_WRONLY|O_RDWR|QIODevice::(WriteOnly|Append|ReadWrite)|copy_file[ \t]*\\(|cv::imwrite|torch::save[ \t]*\\(")

# The names of a run folder's files have one home, RunDirectory (core/runs/run_directory.h):
# outside core/runs (and tests, which check the bytes on disk), a string literal "events.jsonl",
# "config.json" or "checkpoints" is refused, comments aside.
set(_run_file_literal_regex "\"(events\\.jsonl|config\\.json|checkpoints)\"")
set(_run_file_names_exempt "core/runs" "tests")
set(_failures "")
macro(_fail text)
  string(APPEND _failures "${text}\n")
endmacro()

# var: TRUE when text matches regex, else FALSE.
macro(_matches var text regex)
  set(${var} FALSE)
  if("${text}" MATCHES "${regex}")
    set(${var} TRUE)
  endif()
endmacro()

# The regex of "under one of the prefixes": a path is under a prefix when it is the prefix itself,
# inside the folder of that name, or the unit of that name (any extension). One MATCHES per path,
# not a function call per prefix: the check runs on every build and 67 times in tst_layering.
function(_under_any_regex prefixes out)
  set(_alternatives "")
  foreach(_p IN LISTS prefixes)
    string(REGEX REPLACE "([][.+*?()^$|\\])" "\\\\\\1" _escaped "${_p}")
    list(APPEND _alternatives "${_escaped}")
  endforeach()
  list(JOIN _alternatives "|" _joined)
  set(${out} "^(${_joined})([/.]|$)" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE _files RELATIVE "${SOURCE_DIR}" LIST_DIRECTORIES false
  "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp"
  "${SOURCE_DIR}/widgets/*.h" "${SOURCE_DIR}/widgets/*.cpp"
  "${SOURCE_DIR}/app/*.h" "${SOURCE_DIR}/app/*.cpp"
  "${SOURCE_DIR}/tests/*.h" "${SOURCE_DIR}/tests/*.cpp")
list(SORT _files)

# The tables above as regexes, read once: each rule's FROM, and the folders of each list.
foreach(_rule IN LISTS _rules)
  string(FIND "${_rule}" "=" _eq)
  string(SUBSTRING "${_rule}" 0 ${_eq} _key)
  math(EXPR _rest "${_eq} + 1")
  string(SUBSTRING "${_rule}" ${_rest} -1 _value)
  set("_rule_of_${_key}" TRUE)
  string(REPLACE " " ";" "_rule_allowed_${_key}" "${_value}")
endforeach()
set(_system_count 0)
set(_any_system_regex "")
foreach(_entry IN LISTS _system_headers)
  string(FIND "${_entry}" "=" _eq REVERSE)
  string(SUBSTRING "${_entry}" 0 ${_eq} "_system_regex_${_system_count}")
  math(EXPR _rest "${_eq} + 1")
  string(SUBSTRING "${_entry}" ${_rest} -1 _where)
  string(REPLACE " " ";" "_system_where_${_system_count}" "${_where}")
  _under_any_regex("${_system_where_${_system_count}}" "_system_where_regex_${_system_count}")
  list(APPEND _any_system_regex "${_system_regex_${_system_count}}")
  math(EXPR _system_count "${_system_count} + 1")
endforeach()
list(JOIN _any_system_regex "|" _any_system_regex)
_under_any_regex("${_libav_internal_users}" _libav_internal_users_regex)
_under_any_regex("${_no_processes}" _no_processes_regex)
_under_any_regex("${_qt_core_only}" _qt_core_only_regex)
_under_any_regex("${_no_qt}" _no_qt_regex)
_under_any_regex("core/runs;tests" _event_exempt_regex)
_under_any_regex("${_file_writers};tests" _file_writers_regex)
_under_any_regex("${_run_file_names_exempt}" _run_file_names_exempt_regex)

foreach(_file IN LISTS _files)
  # The rule of this file: the longest FROM it is under (the path itself, or a part of it that
  # ends before a "/" or a "."), tried from the longest part down.
  set(_from "")
  set(_allowed "")
  set(_prefix "${_file}")
  while(NOT _prefix STREQUAL "")
    if(DEFINED "_rule_of_${_prefix}")
      set(_from "${_prefix}")
      set(_allowed "${_rule_allowed_${_prefix}}")
      break()
    endif()
    if(NOT _prefix MATCHES "[/.]")
      break()
    endif()
    string(REGEX REPLACE "[/.][^/.]*$" "" _prefix "${_prefix}")
  endwhile()
  if(_from STREQUAL "" OR _from STREQUAL "core")
    _fail("${_file}: not in a domain folder of core/ (docs/architecture.md lists them)")
    continue()
  endif()
  list(APPEND _allowed "${_from}")
  _under_any_regex("${_allowed}" _allowed_regex)
  # What this file may do, whatever it includes.
  _matches(_may_internal "${_file}" "${_libav_internal_users_regex}")
  _matches(_no_proc "${_file}" "${_no_processes_regex}")
  _matches(_core_only "${_file}" "${_qt_core_only_regex}")
  _matches(_qt_banned "${_file}" "${_no_qt_regex}")
  set("_includes_of_${_file}" "")  # our files it includes, for the event rule below

  _matches(_may_write "${_file}" "${_file_writers_regex}")
  _matches(_may_name_run_files "${_file}" "${_run_file_names_exempt_regex}")
  # One read of the file: its includes, and the lines the two rules below look at.
  set(_line_regex "^[ \t]*#[ \t]*include")
  if(NOT _may_write)
    string(APPEND _line_regex "|${_file_write_regex}")
  endif()
  if(NOT _may_name_run_files)
    string(APPEND _line_regex "|${_run_file_literal_regex}")
  endif()
  file(STRINGS "${SOURCE_DIR}/${_file}" _lines REGEX "${_line_regex}")
  foreach(_line IN LISTS _lines)
    if(NOT _line MATCHES "^[ \t]*#[ \t]*include")
      if(_line MATCHES "^[ \t]*(//|\\*)")
        continue()  # a comment
      endif()
      string(STRIP "${_line}" _shown_line)
      if(NOT _may_name_run_files AND _line MATCHES "${_run_file_literal_regex}")
        _fail("${_file}: names the run folder's ${CMAKE_MATCH_1} by a string literal (${_shown_line}); use RunDirectory (core/runs/run_directory.h)")
      endif()
      if(NOT _may_write AND _line MATCHES "${_file_write_regex}")
        _fail("${_file}: opens a file for writing (${_shown_line}); write through core/util/atomic_file.h or the file's owner (docs/architecture.md, \"Writing files\")")
      endif()
      continue()
    endif()
    if(NOT _line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]*)[>\"]")
      # `#include SOME_MACRO` names its file only after preprocessing: no rule could be checked.
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*" "" _what "${_line}")
      _fail("${_file}: includes ${_what}, a computed include; name the file in \"…\" or <…>")
      continue()
    endif()
    set(_kind "${CMAKE_MATCH_1}")
    set(_written "${CMAKE_MATCH_2}")
    # "core/data/../train/trainer.h" is core/train/trainer.h: rules are matched on the normal form.
    cmake_path(SET _inc NORMALIZE "${_written}")
    set(_shown "${_inc}")
    if(NOT _inc STREQUAL _written)
      set(_shown "${_written} (that is ${_inc})")
    endif()
    string(REGEX MATCH "^(core|widgets|app|tests)/" _ours "${_inc}")
    if(_ours)
      list(APPEND "_includes_of_${_file}" "${_inc}")
      if(NOT EXISTS "${SOURCE_DIR}/${_inc}")
        _fail("${_file}: includes ${_shown}, which does not exist")
      endif()
      _matches(_ok "${_inc}" "${_allowed_regex}")
      if(NOT _ok)
        string(REPLACE ";" ", " _list "${_allowed}")
        _fail("${_file}: includes ${_shown}, but ${_from} may include only ${_list}")
      endif()
      if(_inc MATCHES "^core/video/internal([/.]|$)" AND NOT _may_internal)
        _fail("${_file}: includes ${_shown}, a libav internal of core/video that only core/video uses")
      endif()
      # (Where the table already refuses app/studio, as in widgets, that one line says it.)
      if(_ok AND _no_proc AND NOT _core_only AND _inc STREQUAL "app/studio/control/child_process.h")
        _fail("${_file}: includes ${_shown}, but views and tabs never start processes (a controller in app/studio/control does)")
      endif()
      continue()
    endif()
    if(_kind STREQUAL "\"")
      if(NOT _inc MATCHES "\\.moc$")
        _fail("${_file}: includes \"${_written}\" without its layer; write it from the repository root (e.g. core/util/result.h)")
      endif()
      continue()
    endif()
    # A system header, as the compiler finds it through the folders above the usual ones:
    # <x86_64-linux-gnu/libavformat/avformat.h>, <qt6/QtCore/QProcess> and
    # <opencv4/opencv2/core.hpp> are libavformat/…, QtCore/… and opencv2/….
    string(REGEX REPLACE "^[a-z0-9_]+-linux-gnu/" "" _inc "${_inc}")
    string(REGEX REPLACE "^(qt6|opencv4)/" "" _inc "${_inc}")
    # The libraries that belong to one part of the tree.
    set(_system 0)
    if(NOT _inc MATCHES "${_any_system_regex}")
      set(_system ${_system_count})
    endif()
    while(_system LESS _system_count)
      if(_inc MATCHES "${_system_regex_${_system}}" AND NOT _file MATCHES "${_system_where_regex_${_system}}")
        string(REPLACE ";" ", " _list "${_system_where_${_system}}")
        _fail("${_file}: includes <${_written}>, which only ${_list} may include")
      endif()
      math(EXPR _system "${_system} + 1")
    endwhile()
    # Qt: <QString>, <QtCore/QProcess> and Qt's lower-case spelling <qstring.h>, <QtCore/qprocess.h>.
    string(TOLOWER "${_inc}" _lower)
    if(NOT _inc MATCHES "^Q" AND NOT _lower MATCHES "^q[a-z0-9_]*\\.h$")
      continue()
    endif()
    if(_lower STREQUAL "quadmath.h")
      continue()
    endif()
    if(_qt_banned)
      _fail("${_file}: includes <${_written}>, but core and the CLI have no Qt")
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
        _fail("${_file}: includes <${_written}>, which is not Qt Core; ${_from} uses Qt Core only")
      endif()
    endif()
    # QProcess in any spelling, the headers that include it (QProcessEnvironment's), and every Qt
    # module's umbrella header (<QtWidgets>, <QtGui/QtGui>: each brings Qt Core's, and with it QProcess).
    set(_umbrella FALSE)
    if(_inc MATCHES "^Qt[A-Za-z0-9]+$")
      set(_umbrella TRUE)
    elseif(_inc MATCHES "^(Qt[A-Za-z0-9]+)/(Qt[A-Za-z0-9]+)$" AND CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_2)
      set(_umbrella TRUE)
    endif()
    if(_no_proc AND NOT _core_only AND (_umbrella OR _lower MATCHES "^(qtcore/)?qprocess(environment)?(\\.h)?$"))
      _fail("${_file}: includes <${_written}>, but views and tabs never start processes (a controller in app/studio/control does)")
    endif()
  endforeach()
endforeach()

# The event protocol has one owner, core/runs: its names are the constants of event_fields.h. A
# file elsewhere that may see events names none of them by a string literal. It may see events
# when it includes, directly or through our headers, a header of core/runs or the Trainer (whose
# on_event hands them out). Tests are exempt: they check the bytes on disk.
#
# Most names are the protocol's own ("loss_d", "run_finished") and are refused wherever they stand
# as a literal, comments aside. A few are also plain words with other uses in such files (a
# subcommand "status", a state "failed", a label "device", a command-line option "dataset"): a
# field among them is refused where it is a JSON key ({{"x", …}, …}, {"x", …}} after another
# pair, ["x"], .value("x", …),
# .find/.contains/.at/.count/.erase("x"), also through QStringLiteral or QLatin1String), a type or
# status where an event is written (emit("x", …)) or a value compared ("x" == …, … != "x",
# strcmp(…, "x"), .compare("x")).
set(_event_plain_words status completed stopped failed device imported path message time type v config
                       version seconds epoch epochs step steps images threads workers root layout cache index
                       samples checkpoint warning error system parzen metrics dataset sigma stderr n_samples n_train)
set(_event_fields "")
set(_event_types "")
if(EXISTS "${SOURCE_DIR}/core/runs/event_fields.h")
  file(STRINGS "${SOURCE_DIR}/core/runs/event_fields.h" _constants
       REGEX "^namespace (type|status|field) {|inline constexpr char k[A-Za-z0-9]+\\[\\] = \"[^\"]+\";")
  set(_namespace "")
  foreach(_constant IN LISTS _constants)
    if(_constant MATCHES "^namespace ([a-z]+) {")
      set(_namespace "${CMAKE_MATCH_1}")
    elseif(_constant MATCHES " = \"([^\"]+)\";")
      if(_namespace STREQUAL "field")
        list(APPEND _event_fields "${CMAKE_MATCH_1}")
      else()
        list(APPEND _event_types "${CMAKE_MATCH_1}")
      endif()
    endif()
  endforeach()
endif()
set(_event_names ${_event_fields} ${_event_types})
# The headers that may see events: core/runs' (but those of the run folder's paths and evaluation
# files, which name no event) and the Trainer's, then every header of ours that includes one of
# them, until none is added.
set(_sees_events "core/train/trainer.h")
set(_names_no_event "core/runs/run_directory.h" "core/runs/evaluated_checkpoint.h" "core/runs/parzen_evaluation_file.h"
                    "core/runs/quality_evaluation_file.h")
foreach(_file IN LISTS _files)
  list(FIND _names_no_event "${_file}" _no_event)
  if(_file MATCHES "^core/runs/[^/]+\\.h$" AND _no_event EQUAL -1)
    list(APPEND _sees_events "${_file}")
  endif()
endforeach()
set(_added TRUE)
while(_added)
  set(_added FALSE)
  foreach(_file IN LISTS _files)
    list(FIND _sees_events "${_file}" _known)
    if(NOT _file MATCHES "\\.h$" OR NOT _known EQUAL -1)
      continue()
    endif()
    foreach(_inc IN LISTS "_includes_of_${_file}")
      list(FIND _sees_events "${_inc}" _hit)
      if(NOT _hit EQUAL -1)
        list(APPEND _sees_events "${_file}")
        set(_added TRUE)
        break()
      endif()
    endforeach()
  endforeach()
endwhile()
set(_quoted "\"([a-z0-9_]+)\"")
# "FIELD|TYPE=REGEX": where a literal names a field, where it names a type or status.
set(_naming_contexts
  "FIELD=\\[[ \t]*${_quoted}[ \t]*\\]"
  "FIELD=\\{\\{[ \t]*${_quoted}[ \t]*,"
  "FIELD=\\}[ \t]*,[ \t\n]*\\{[ \t]*${_quoted}[ \t]*,"
  "FIELD=\\.[ \t]*(value|find|contains|at|count|erase|emplace|insert)[ \t]*\\([ \t]*((QStringLiteral|QLatin1String|QString)[ \t]*\\([ \t]*)?${_quoted}"
  "TYPE=\\.[ \t]*(compare|starts_with|ends_with)[ \t]*\\([ \t]*${_quoted}"
  "TYPE=(emit|strcmp)[ \t]*\\([^;\"]*${_quoted}"
  "TYPE=[!=]=[ \t]*${_quoted}"
  "TYPE=${_quoted}[ \t]*[!=]=")
foreach(_file IN LISTS _files)
  if(_file MATCHES "${_event_exempt_regex}")
    continue()
  endif()
  set(_speaks FALSE)
  foreach(_inc IN LISTS "_includes_of_${_file}")
    list(FIND _sees_events "${_inc}" _hit)
    if(NOT _hit EQUAL -1)
      set(_speaks TRUE)
    endif()
  endforeach()
  if(NOT _speaks)
    continue()
  endif()
  file(READ "${SOURCE_DIR}/${_file}" _text)
  # Comments aside: "// … "step" …" explains, it names nothing.
  string(REGEX REPLACE "(^|[ \t\n;{}])//[^\n]*" "\\1" _text "${_text}")
  set(_reported "")
  string(REGEX MATCHALL "${_quoted}" _literals "${_text}")
  foreach(_literal IN LISTS _literals)
    string(REGEX REPLACE "^\"(.*)\"$" "\\1" _name "${_literal}")
    list(FIND _event_names "${_name}" _known)
    list(FIND _event_plain_words "${_name}" _plain)
    list(FIND _reported "${_name}" _again)
    if(NOT _known EQUAL -1 AND _plain EQUAL -1 AND _again EQUAL -1)
      list(APPEND _reported "${_name}")
      _fail("${_file}: names the event field or type \"${_name}\" by a string literal; use its constant in core/runs/event_fields.h")
    endif()
  endforeach()
  foreach(_entry IN LISTS _naming_contexts)
    string(FIND "${_entry}" "=" _eq)
    string(SUBSTRING "${_entry}" 0 ${_eq} _names_of)
    math(EXPR _rest "${_eq} + 1")
    string(SUBSTRING "${_entry}" ${_rest} -1 _context)
    if(_names_of STREQUAL "FIELD")
      set(_names ${_event_fields})
    else()
      set(_names ${_event_types})
    endif()
    string(REGEX MATCHALL "${_context}" _uses "${_text}")
    foreach(_use IN LISTS _uses)
      string(REGEX MATCHALL "${_quoted}" _in_use "${_use}")
      foreach(_literal IN LISTS _in_use)
        string(REGEX REPLACE "^\"(.*)\"$" "\\1" _name "${_literal}")
        list(FIND _names "${_name}" _known)
        list(FIND _reported "${_name}" _again)
        if(NOT _known EQUAL -1 AND _again EQUAL -1)
          list(APPEND _reported "${_name}")
          _fail("${_file}: names the event field or type \"${_name}\" by a string literal; use its constant in core/runs/event_fields.h")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(_failures)
  message("${_failures}")
  message(FATAL_ERROR "check_layering: the rules of docs/architecture.md are broken (above)")
endif()
