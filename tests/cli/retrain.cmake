# A shipped trained model is reproduced bit for bit by the command its comment gives.
#   cmake -DATTN=path/to/attn -DEXPECTED=data/examples/trained_NAME.json -DWORK_DIR=scratch -P retrain.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(READ ${EXPECTED} text)
# "... Trained by 'attn train --task translate -o FILE' (the same command ..."
if(NOT text MATCHES "Trained by 'attn train ([^']*) -o FILE'")
  message(FATAL_ERROR "${EXPECTED}: no 'Trained by' command in its comment")
endif()
separate_arguments(args UNIX_COMMAND "${CMAKE_MATCH_1}")
execute_process(COMMAND ${ATTN} train ${args} -o ${WORK_DIR}/retrained.json -q WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "attn train ${args} exited with ${code}: ${err}")
endif()
file(SHA256 ${WORK_DIR}/retrained.json got)
file(SHA256 ${EXPECTED} expected)
if(NOT got STREQUAL expected)
  execute_process(COMMAND diff ${EXPECTED} ${WORK_DIR}/retrained.json OUTPUT_VARIABLE diff)
  string(SUBSTRING "${diff}" 0 2000 diff)
  message(FATAL_ERROR "attn train ${args} wrote another file than ${EXPECTED}:\n${diff}")
endif()
