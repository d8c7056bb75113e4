# attn train end to end: the same command writes the same bytes (model and log) run after
# run; the trained file loads in explain, grad and train again; a bad data file or option
# stops the run with one line on stderr, exit 2, and no output file.
#
#   cmake -DATTN=path/to/attn -DSOURCE_DIR=repo -DWORK_DIR=scratch/folder -P train.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(CASE ${SOURCE_DIR}/tests/reference/torch_train/adam_clip_cosine)
set(failures "")

# attn(CODE STDERR_VARIABLE ARGS...): runs attn with ARGS in WORK_DIR, expecting exit CODE.
function(attn expected_code err_var)
  execute_process(COMMAND ${ATTN} ${ARGN} WORKING_DIRECTORY ${WORK_DIR} INPUT_FILE /dev/null
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code STREQUAL "${expected_code}")
    message(FATAL_ERROR "attn ${ARGN} exited with ${code}, expected ${expected_code}:\n${out}\n${err}")
  endif()
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

set(TRAIN train -c ${CASE}.json --data ${CASE}.jsonl --steps 12 --batch-size 4 --optimizer adamw --lr 0.01
          --schedule cosine --warmup 3 --clip 1 --seed 5 --eval ${CASE}.jsonl -q)
attn(0 err ${TRAIN} -o a.json --log a.log)
attn(0 err ${TRAIN} -o b.json --log b.log)
foreach(pair "a.json;b.json" "a.log;b.log")
  list(GET pair 0 first)
  list(GET pair 1 second)
  file(SHA256 ${WORK_DIR}/${first} x)
  file(SHA256 ${WORK_DIR}/${second} y)
  if(NOT x STREQUAL y)
    set(failures "${failures}\n  the same command wrote ${first} and ${second} differently")
  endif()
endforeach()
file(STRINGS ${WORK_DIR}/a.log log)
list(LENGTH log lines)
if(NOT lines EQUAL 13)  # 12 steps and the evaluation at the end
  set(failures "${failures}\n  a.log has ${lines} lines, expected 13")
endif()
list(GET log 12 last)
if(NOT last MATCHES "^\\{\"step\": 12, \"eval_loss\": [0-9.e-]+, \"eval_exact_match\": [0-9.e-]+, \"eval_token_accuracy\"")
  set(failures "${failures}\n  the log's last line: ${last}")
endif()

# The trained file is a model file: explain, grad and train read it.
attn(0 err explain -c a.json --quiet)
attn(0 err grad -c a.json --quiet)
attn(0 err train -c a.json --data ${CASE}.jsonl --steps 2 --optimizer sgd --lr 0.1 -o c.json -q)
# An existing output is kept unless --force.
attn(2 err ${TRAIN} -o a.json)
if(NOT err MATCHES "a.json: already exists; use --force to replace it\n$")
  set(failures "${failures}\n  existing output: ${err}")
endif()

# Bad data: the line and the JSON path, one line, exit 2, nothing written.
file(WRITE ${WORK_DIR}/bad.jsonl
     "{\"tokens\": [\"the\"], \"target_tokens\": [\"<BOS>\"], \"labels\": [\"cat\"]}\n\n{\"tokens\": [\"the\"], \"target_tokens\": [\"<BOS>\"], \"labels\": [\"cat\", \"sat\"]}\n")
file(WRITE ${WORK_DIR}/broken.jsonl "{\"tokens\": [\"the\"], \"target_tokens\": [\"<BOS>\"], \"labels\": [\"cat\"]}\n{\"tokens\": [\n")
file(WRITE ${WORK_DIR}/nolabels.jsonl "{\"tokens\": [\"the\"], \"target_tokens\": [\"<BOS>\"]}\n")
foreach(bad "bad.jsonl:3: labels: expected 1 label" "broken.jsonl:2: malformed JSON" "nolabels.jsonl:1: expected labels")
  string(REGEX REPLACE ":.*" "" file ${bad})
  attn(2 err train -c ${CASE}.json --data ${file} -o out.json --log out.log)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines count)
  string(FIND "${err}" "${bad}" at)
  if(NOT count EQUAL 1 OR at EQUAL -1)
    set(failures "${failures}\n  ${file}: expected one line naming ${bad}, found: ${err}")
  endif()
  if(EXISTS ${WORK_DIR}/out.json OR EXISTS ${WORK_DIR}/out.log)
    set(failures "${failures}\n  ${file}: a partial output was written")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "attn train:${failures}")
endif()
