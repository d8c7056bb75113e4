# Checks that docs/steps/ (${STEPS_DIR}) has one page per step kind of `attn steps --kinds`,
# that README.md links them in that order, that no page is left over for a kind attn no
# longer has, and that tests/docs/CMakeLists.txt checks the examples of each page
# (${EXPECTED_KINDS}, comma-separated: the kinds whose pages it runs check_doc_examples.cmake on).

cmake_minimum_required(VERSION 3.18)

execute_process(COMMAND "${ATTN}" steps --kinds OUTPUT_VARIABLE listing ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "attn steps --kinds failed (exit ${code}): ${err}")
endif()

string(REPLACE "," ";" EXPECTED_KINDS "${EXPECTED_KINDS}")

# The first word of each line is a kind.
string(REGEX MATCHALL "(^|\n)[a-z_]+" kinds "${listing}")
list(TRANSFORM kinds STRIP)
if(NOT kinds STREQUAL EXPECTED_KINDS)
  message(FATAL_ERROR "attn steps --kinds lists\n  ${kinds}\nbut tests/docs/CMakeLists.txt checks the pages of\n"
                      "  ${EXPECTED_KINDS}\nadd or remove the pages and their tests")
endif()

file(READ "${STEPS_DIR}/README.md" index)
set(position -1)
foreach(kind IN LISTS kinds)
  if(NOT EXISTS "${STEPS_DIR}/${kind}.md")
    message(FATAL_ERROR "docs/steps/${kind}.md is missing: every step kind needs its page")
  endif()
  string(FIND "${index}" "](${kind}.md)" link)
  if(link EQUAL -1)
    message(FATAL_ERROR "docs/steps/README.md does not link ${kind}.md")
  endif()
  if(NOT link GREATER position)
    message(FATAL_ERROR "docs/steps/README.md links ${kind}.md out of the walkthrough's order")
  endif()
  set(position ${link})
endforeach()

file(GLOB pages RELATIVE "${STEPS_DIR}" "${STEPS_DIR}/*.md")
foreach(page IN LISTS pages)
  string(REGEX REPLACE "\\.md$" "" kind "${page}")
  if(NOT kind STREQUAL "README" AND NOT kind IN_LIST kinds)
    message(FATAL_ERROR "docs/steps/${page} is not a step kind of attn steps --kinds")
  endif()
endforeach()
list(LENGTH kinds count)
message(STATUS "docs/steps: ${count} step kinds, each with its page, linked in order from README.md")
