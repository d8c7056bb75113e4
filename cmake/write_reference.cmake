# Runs attn to write one of its reference files (the man page, a completion script):
#   cmake -DATTN=path/to/attn "-DARGS=--completion;bash" -DOUTPUT=file -P write_reference.cmake
execute_process(COMMAND ${ATTN} ${ARGS} OUTPUT_FILE ${OUTPUT} ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  file(REMOVE ${OUTPUT})
  message(FATAL_ERROR "attn ${ARGS} failed (exit ${code}): ${err}")
endif()
