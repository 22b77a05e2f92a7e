# pure_sources.cmake -DDIR=... -DWHAT=...: fails when a C file of a pure core (DIR)
# writes to a log or a stream itself (fl_log, fprintf, printf, puts, stderr, stdout):
# the Raft core reports through its ready (events and notes), never by printing
# (STYLE.md, issue 15 §4). snprintf into a buffer is fine.
file(GLOB srcs "${DIR}/*.c" "${DIR}/*.h")
list(LENGTH srcs n)
if(n EQUAL 0)
  message(FATAL_ERROR "${DIR}: no sources")
endif()
set(bad "")
foreach(f ${srcs})
  file(STRINGS "${f}" lines
       REGEX "(^|[^a-zA-Z_])(fl_log|v?f?printf|fputs|puts|fwrite) *\\(|(^|[^a-zA-Z_])(stderr|stdout)([^a-zA-Z_]|$)")
  foreach(l ${lines})
    if(NOT l MATCHES "format\\(printf")
      string(APPEND bad "${f}: ${l}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "${WHAT} writes output itself:\n${bad}")
endif()
message(STATUS "${WHAT}: ${n} files, none prints")
