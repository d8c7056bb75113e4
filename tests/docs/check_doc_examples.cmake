# Checks the marked examples of the page ${DOC} (docs/*.md) with the attn binary ${ATTN}.
# A marker line directly before a ```json block holding a complete model file says what to
# check; the file is written to ${WORK_DIR}/model.json (the name the docs' messages show):
#
#   <!-- example: model-file -->        `attn explain -c model.json --quiet` exits 0 and
#                                        prints nothing on stderr
#   <!-- example: model-file-error -->  attn exits 2 and stderr is exactly the ```text
#                                        block that follows the ```json block
#   <!-- example: dump -->              `attn explain -c model.json --quiet --dump -` exits 0
#                                        and stdout is exactly the ```json block that follows
#
# The document is handled as one string (string(FIND)/SUBSTRING), never as a CMake list,
# so the brackets and semicolons of JSON cannot confuse it.

cmake_minimum_required(VERSION 3.18)  # script mode: modern policies (while(TRUE) needs CMP0012)

set(marker "<!-- example: ")
file(READ "${DOC}" rest)
file(MAKE_DIRECTORY "${WORK_DIR}")

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

set(loaded 0)
set(refused 0)
set(dumped 0)
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
    message(FATAL_ERROR "${where}: unknown example kind '${kind}' (model-file, model-file-error or dump)")
  endif()
endwhile()

if(number EQUAL 0)
  message(FATAL_ERROR "${DOC}: found no <!-- example: ... --> markers; the markers may have changed")
endif()
message(STATUS "${DOC}: ${loaded} examples load, ${refused} error examples give their documented message, "
               "${dumped} dumps are as shown")
