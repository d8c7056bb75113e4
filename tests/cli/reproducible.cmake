# The same model, input and build give the same bits whatever the output: under dump names
# of other lengths, as JSON and as .npz, on stdout, with the walkthrough printing or not,
# on one thread or three, run after run (docs/architecture.md, "What is bit-reproducible").
# The model is large enough for the fast kernels (products, the vectorized softmax): the
# heap address of a buffer once decided which softmax entries took a scalar exp, so the
# numbers changed with the length of the dump's file name.
#
#   cmake -DATTN=path/to/attn -DWORK_DIR=scratch/folder -P reproducible.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
# 2 layers, 4 heads of 16 over 300 causal positions: 4 x 300 x 300 = 360,000 weights a
# layer (the fast softmax from 32,768), products of 1.2M multiply-adds (two threads).
file(WRITE ${WORK_DIR}/model.json [=[{
  "model": {"d_model": 64, "num_heads": 4, "d_ff": 128, "num_layers": 2, "causal": true, "activation": "gelu",
            "seed": 3},
  "input": {"X": {"randn": [300, 64]}, "output_grad": "randn"},
  "encoder": "randn"
}
]=])

set(failures "")
# run(NAME OUT ARGS...): runs attn explain (or COMMAND) on the model with ARGS; its stdout
# goes to OUT. ENV (a list of NAME=value) is set for the run.
set(COMMAND explain)
function(run name out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV} ${ATTN} ${COMMAND} -c model.json ${ARGN}
                  WORKING_DIRECTORY ${WORK_DIR} INPUT_FILE /dev/null OUTPUT_FILE ${out}
                  ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "${name}: attn ${COMMAND} ${ARGN} exited with ${code}:\n${err}")
  endif()
endfunction()
# same(WHAT FILE REFERENCE): FILE must hold the same bytes as REFERENCE; FILE is removed
# after (the dumps are tens of MB).
function(same what file reference)
  file(SHA256 ${WORK_DIR}/${file} got)
  file(SHA256 ${WORK_DIR}/${reference} expected)
  if(NOT got STREQUAL expected)
    set(failures "${failures}\n  ${what}: ${file} differs from ${reference}" PARENT_SCOPE)
  endif()
  file(REMOVE ${WORK_DIR}/${file})
endfunction()

# Names of 1, 5, 14 and 20 characters before the extension.
set(stems d dump0 dump_fourteen0 dump_twenty_chars000)
set(ENV "")
run(reference /dev/null --quiet --dump reference.json)
run(reference /dev/null --quiet --dump reference.npz)
foreach(stem IN LISTS stems)
  run(${stem}.json /dev/null --quiet --dump ${stem}.json)
  same("JSON under another name" ${stem}.json reference.json)
  run(${stem}.npz /dev/null --quiet --dump ${stem}.npz)
  same(".npz under another name" ${stem}.npz reference.npz)
endforeach()
run(stdout stdout.json --quiet --dump -)
same("JSON on stdout" stdout.json reference.json)
# The walkthrough printed meanwhile (to stdout, discarded here): other allocations, other addresses.
run(printing /dev/null --dump printing.json)
same("JSON while the walkthrough prints" printing.json reference.json)
run(printing /dev/null --dump printing_too.npz)
same(".npz while the walkthrough prints" printing_too.npz reference.npz)
# Threads: every split is fixed by the sizes, never by the number of threads.
foreach(threads 1 3)
  set(ENV OMP_NUM_THREADS=${threads})
  run(threads${threads} /dev/null --quiet --dump threads${threads}.json)
  same("JSON with OMP_NUM_THREADS=${threads}" threads${threads}.json reference.json)
endforeach()

# attn grad (the backward's transposed products, its softmax and LayerNorm): the same bits
# under another name, on stdout, while printing, and on one thread or three.
set(COMMAND grad)
set(ENV "")
run(grad_reference /dev/null --quiet --dump grad_reference.npz)
run(grad_name /dev/null --quiet --dump grad_under_a_much_longer_name.npz)
same("grad .npz under another name" grad_under_a_much_longer_name.npz grad_reference.npz)
run(grad_json /dev/null --quiet --dump grad_reference.json)
run(grad_stdout grad_stdout.json --quiet --dump -)
same("grad JSON on stdout" grad_stdout.json grad_reference.json)
foreach(threads 1 3)
  set(ENV OMP_NUM_THREADS=${threads})
  run(grad_threads${threads} /dev/null --quiet --dump grad_threads${threads}.npz)
  same("grad .npz with OMP_NUM_THREADS=${threads}" grad_threads${threads}.npz grad_reference.npz)
endforeach()

if(failures)
  message(FATAL_ERROR "the same model gave other bits:${failures}")
endif()
