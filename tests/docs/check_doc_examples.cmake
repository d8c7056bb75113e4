# Checks the marked examples of the page ${DOC} (docs/*.md, or docs/steps/*.md) with the attn
# binary ${ATTN}. A marker line says what to check. Model-file markers come directly before a
# ```json block holding a complete model file, which is written to ${WORK_DIR}/model.json (the
# name the docs' messages show):
#
#   <!-- example: model-file -->        `attn explain -c model.json --quiet` exits 0 and
#                                        prints nothing on stderr
#   <!-- example: model-file-error -->  attn exits 2 and stderr is exactly the ```text
#                                        block that follows the ```json block
#   <!-- example: dump -->              `attn explain -c model.json --quiet --dump -` exits 0
#                                        and stdout is exactly the ```json block that follows
#
# Output markers come directly before a ```text block whose first line is the command, written
# as the reader types it: `$ attn ARGS...` (arguments split as a shell would, quotes and all).
# The command runs in ${WORK_DIR}, so `-c model.json` reads the page's last model-file example;
# it must exit 0 and print nothing on stderr, and the rest of the block is compared with stdout:
#
#   <!-- example: output -->            stdout is exactly the rest of the block
#   <!-- example: output-excerpt -->    the rest of the block is one or more pieces of whole
#                                        lines, separated by lines `[...]` (a part left out);
#                                        each piece occurs in stdout, in this order
#
# With -DUPDATE=ON, a differing `output` block is rewritten in ${DOC} with the real stdout
# instead of failing (for a deliberate change of the walkthrough: reread the prose around
# each block that changed). Excerpts are never rewritten; a failing one is reported with the
# real stdout saved beside it.
#
# The document is handled as one string (string(FIND)/SUBSTRING), never as a CMake list,
# so the brackets and semicolons of JSON cannot confuse it.

cmake_minimum_required(VERSION 3.18)  # script mode: modern policies (while(TRUE) needs CMP0012)

set(marker "<!-- example: ")
file(READ "${DOC}" rest)
file(MAKE_DIRECTORY "${WORK_DIR}")
# LINKS: NAME=PATH pairs (|-separated): each PATH linked into ${WORK_DIR} as NAME, so that a
# page's commands name a test folder as a reader names theirs (`--model gpt2-tiny`).
if(LINKS)
  string(REPLACE "|" ";" link_list "${LINKS}")
  foreach(link IN LISTS link_list)
    string(REGEX REPLACE "=.*" "" link_name "${link}")
    string(REGEX REPLACE "^[^=]*=" "" link_target "${link}")
    file(REMOVE "${WORK_DIR}/${link_name}")
    file(CREATE_LINK "${link_target}" "${WORK_DIR}/${link_name}" SYMBOLIC)
  endforeach()
endif()

# Sets ${out} to the body of the fenced block of language ${lang} that starts ${text}
# (only blank space may come before the fence) and ${after} to the text after the block.
function(take_fenced_block text lang where out after)
  string(FIND "${text}" "```${lang}\n" open)
  if(open EQUAL -1)
    message(FATAL_ERROR "${where}: expected a ```${lang} block")
  endif()
  string(SUBSTRING "${text}" 0 ${open} before)
  string(STRIP "${before}" before)
  if(NOT before STREQUAL "")
    message(FATAL_ERROR "${where}: expected the ```${lang} block right after, found: ${before}")
  endif()
  string(LENGTH "```${lang}\n" fence_length)
  math(EXPR body_start "${open} + ${fence_length}")
  string(SUBSTRING "${text}" ${body_start} -1 text)
  string(FIND "${text}" "\n```" close)
  if(close EQUAL -1)
    message(FATAL_ERROR "${where}: the ```${lang} block is not closed")
  endif()
  string(SUBSTRING "${text}" 0 ${close} body)
  math(EXPR rest_start "${close} + 4")
  string(SUBSTRING "${text}" ${rest_start} -1 text)
  set(${out} "${body}" PARENT_SCOPE)
  set(${after} "${text}" PARENT_SCOPE)
endfunction()

# Runs the command line `$ attn ARGS...` of an output block in ${WORK_DIR}; sets ${out} to its
# stdout, and stops the check if it fails or writes anything on stderr.
function(run_documented_command command_line where out)
  if(NOT command_line MATCHES "^\\$ attn( |$)")
    message(FATAL_ERROR "${where}: the ```text block must start with the command, `$ attn ...`, "
                        "found: ${command_line}")
  endif()
  string(SUBSTRING "${command_line}" 6 -1 arguments)
  separate_arguments(arguments UNIX_COMMAND "${arguments}")
  execute_process(COMMAND "${ATTN}" ${arguments}
                  WORKING_DIRECTORY "${WORK_DIR}"
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE code)
  if(NOT code STREQUAL "0" OR NOT stderr STREQUAL "")
    message(FATAL_ERROR "${where}: exit ${code}, stderr:\n${stderr}")
  endif()
  set(${out} "${stdout}" PARENT_SCOPE)
endfunction()

# Sets ${missing} to the first piece of ${excerpt} (pieces of whole lines separated by lines
# `[...]`) that does not occur in ${text} after the pieces before it, or to "" when all do.
function(find_missing_piece text excerpt missing)
  set(separator "\n[...]\n")
  string(LENGTH "${separator}" separator_length)
  set(pieces "\n${excerpt}\n")           # so that a leading or trailing `[...]` line is a separator too
  set(haystack "\n${text}")
  while(TRUE)
    string(FIND "${pieces}" "${separator}" cut)
    if(cut EQUAL -1)
      string(LENGTH "${pieces}" piece_end)
      math(EXPR piece_end "${piece_end} - 1")
    else()
      set(piece_end ${cut})
    endif()
    if(piece_end GREATER 1)                   # not an empty piece
      math(EXPR piece_length "${piece_end} - 1")
      string(SUBSTRING "${pieces}" 1 ${piece_length} piece)
      string(FIND "${haystack}" "\n${piece}\n" at)
      if(at EQUAL -1)
        set(${missing} "${piece}" PARENT_SCOPE)
        return()
      endif()
      math(EXPR next "${at} + 1 + ${piece_length}")
      string(SUBSTRING "${haystack}" ${next} -1 haystack)
    endif()
    if(cut EQUAL -1)
      break()
    endif()
    math(EXPR next "${cut} + ${separator_length} - 1")
    string(SUBSTRING "${pieces}" ${next} -1 pieces)
  endwhile()
  set(${missing} "" PARENT_SCOPE)
endfunction()

file(READ "${DOC}" document)
set(updated 0)
set(stale_excerpts "")
set(loaded 0)
set(refused 0)
set(dumped 0)
set(outputs 0)
set(excerpts 0)
set(number 0)
while(TRUE)
  string(FIND "${rest}" "${marker}" at)
  if(at EQUAL -1)
    break()
  endif()
  math(EXPR number "${number} + 1")
  string(LENGTH "${marker}" marker_length)
  math(EXPR kind_start "${at} + ${marker_length}")
  string(SUBSTRING "${rest}" ${kind_start} -1 rest)
  string(FIND "${rest}" " -->" kind_end)
  string(SUBSTRING "${rest}" 0 ${kind_end} kind)
  math(EXPR body_start "${kind_end} + 4")
  string(SUBSTRING "${rest}" ${body_start} -1 rest)
  set(where "${DOC}: example ${number} (${kind})")

  if(kind STREQUAL "output" OR kind STREQUAL "output-excerpt")
    take_fenced_block("${rest}" text "${where}" block rest)
    string(FIND "${block}" "\n" end_of_command)
    if(end_of_command EQUAL -1)               # the command alone: no output (yet; UPDATE fills it in)
      set(command_line "${block}")
      set(expected "")
    else()
      string(SUBSTRING "${block}" 0 ${end_of_command} command_line)
      math(EXPR expected_start "${end_of_command} + 1")
      string(SUBSTRING "${block}" ${expected_start} -1 expected)
    endif()
    set(where "${where}: ${command_line}")
    run_documented_command("${command_line}" "${where}" out)
    if(kind STREQUAL "output")
      if(NOT out STREQUAL "${expected}\n")
        if(UPDATE)
          string(REPLACE "```text\n${block}\n```" "```text\n${command_line}\n${out}```" document "${document}")
          math(EXPR updated "${updated} + 1")
        else()
          file(WRITE "${WORK_DIR}/actual_output_${number}.txt" "${out}")
          message(FATAL_ERROR "${where}\nThe output differs from the page; attn wrote "
                              "${WORK_DIR}/actual_output_${number}.txt (diff it against the block). "
                              "To rewrite the page's output blocks: -DUPDATE=ON, see tests/docs/CMakeLists.txt")
        endif()
      endif()
      math(EXPR outputs "${outputs} + 1")
    else()
      find_missing_piece("${out}" "${expected}" missing)
      if(NOT missing STREQUAL "")
        file(WRITE "${WORK_DIR}/actual_output_${number}.txt" "${out}")
        # Indented, so that CMake prints the lines as they are instead of reflowing them.
        string(REPLACE "\n" "\n    " missing "    ${missing}")
        string(CONCAT problem "${where}\nThis part of the excerpt is not in the output (or not in this order):\n"
                      "${missing}\nattn wrote ${WORK_DIR}/actual_output_${number}.txt")
        if(NOT UPDATE)
          message(FATAL_ERROR "${problem}")
        endif()
        string(APPEND stale_excerpts "${problem}\n")
      endif()
      math(EXPR excerpts "${excerpts} + 1")
    endif()
    continue()
  endif()

  take_fenced_block("${rest}" json "${where}" json rest)
  file(WRITE "${WORK_DIR}/model.json" "${json}\n")
  execute_process(COMMAND "${ATTN}" explain -c model.json --quiet
                  WORKING_DIRECTORY "${WORK_DIR}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)

  if(kind STREQUAL "model-file")
    if(NOT code STREQUAL "0" OR NOT err STREQUAL "")
      message(FATAL_ERROR "${where} does not load (exit ${code}):\n${err}\nThe example:\n${json}")
    endif()
    math(EXPR loaded "${loaded} + 1")
  elseif(kind STREQUAL "model-file-error")
    take_fenced_block("${rest}" text "${where}" expected rest)
    if(NOT code STREQUAL "2" OR NOT err STREQUAL "${expected}\n")
      message(FATAL_ERROR "${where}: expected exit 2 and the message\n${expected}\n"
                          "got exit ${code} and\n${err}\nThe example:\n${json}")
    endif()
    math(EXPR refused "${refused} + 1")
  elseif(kind STREQUAL "dump")
    take_fenced_block("${rest}" json "${where}" expected rest)
    execute_process(COMMAND "${ATTN}" explain -c model.json --quiet --dump -
                    WORKING_DIRECTORY "${WORK_DIR}"
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
    if(NOT code STREQUAL "0" OR NOT out STREQUAL "${expected}\n")
      file(WRITE "${WORK_DIR}/actual_dump.json" "${out}")
      message(FATAL_ERROR "${where}: the dump differs from the page (exit ${code}); attn wrote "
                          "${WORK_DIR}/actual_dump.json\n${err}")
    endif()
    math(EXPR dumped "${dumped} + 1")
  else()
    message(FATAL_ERROR "${where}: unknown example kind '${kind}' (model-file, model-file-error, dump, output "
                        "or output-excerpt)")
  endif()
endwhile()

if(number EQUAL 0)
  message(FATAL_ERROR "${DOC}: found no <!-- example: ... --> markers; the markers may have changed")
endif()
if(updated GREATER 0)
  file(WRITE "${DOC}" "${document}")
  message(STATUS "${DOC}: rewrote ${updated} output blocks with attn's real output")
endif()
if(NOT stale_excerpts STREQUAL "")
  message(FATAL_ERROR "Excerpts are not rewritten; fix these by hand:\n${stale_excerpts}")
endif()
message(STATUS "${DOC}: ${loaded} examples load, ${refused} error examples give their documented message, "
               "${dumped} dumps are as shown, ${outputs} outputs are exact, ${excerpts} excerpts are found")
