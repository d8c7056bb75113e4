# A number or claim in the prose of a page, checked against what attn prints (only output
# blocks are compared by check_doc_examples.cmake; prose drifts unless a test reads it).
#   cmake -DDOC=page.md "-DPHRASE=text the page says" [-DATTN=attn "-DARGS=a|b|c"] [-DFILE=f]
#         ["-DSHELL_COMMAND={attn} explain ''" (sh -c: for an empty argument, which a list drops)]
#         "-DMATCH=regex" ["-DNOT_MATCH=regex"] -P check_prose_claim.cmake
# The page holds PHRASE (its line breaks may fall anywhere: whitespace is compared as one
# space), and the output of `attn ARGS` (or the file FILE) matches MATCH and not NOT_MATCH.
cmake_minimum_required(VERSION 3.18)  # script mode: modern policies

file(READ "${DOC}" page)
string(REGEX REPLACE "[ \n]+" " " page "${page}")
string(REGEX REPLACE "[ \n]+" " " phrase "${PHRASE}")
string(FIND "${page}" "${phrase}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} does not say \"${PHRASE}\" (any more): update this test with the prose")
endif()
if(DEFINED FILE AND NOT FILE STREQUAL "")
  file(READ "${FILE}" out)
  set(what "${FILE}")
elseif(DEFINED SHELL_COMMAND AND NOT SHELL_COMMAND STREQUAL "")
  string(REPLACE "{attn}" "${ATTN}" command "${SHELL_COMMAND}")
  execute_process(COMMAND sh -c "${command}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${command} exited with ${code}: ${err}")
  endif()
  set(what "${command}")
else()
  string(REPLACE "|" ";" args "${ARGS}")
  execute_process(COMMAND ${ATTN} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "attn ${args} exited with ${code}: ${err}")
  endif()
  set(what "attn ${args}")
endif()
if(NOT out MATCHES "${MATCH}")
  message(FATAL_ERROR "${DOC} says \"${PHRASE}\", but ${what} does not match ${MATCH}")
endif()
if(NOT NOT_MATCH STREQUAL "" AND out MATCHES "${NOT_MATCH}")
  message(FATAL_ERROR "${DOC} says \"${PHRASE}\", but ${what} matches ${NOT_MATCH}")
endif()
message(STATUS "${DOC}: \"${PHRASE}\" holds")
