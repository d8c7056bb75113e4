# A checkpoint's weights kept as stored give the bytes of the same runs with the weights
# widened to float64 at load (ATTN_WIDEN_WEIGHTS=1): the walkthrough (which widens the weight
# it prints, one at a time), --full (the embedding printed whole), the dumps as JSON and
# .npz with every parameter (widened one at a time as written), the HTML page, the lens and
# an ablation, attn heads, attn validate and generate's lesson, and generate's dump with the
# transposed matrices laid out in panels (ATTN_PANELS=1). Each tiny reference
# checkpoint (tests/reference/hf_checkpoints: F32, F16, BF16, F64; GPT-2's columns of
# c_attn, Llama's and Qwen's transposed nn.Linear, tied and untied heads) is copied beside
# a tokenizer.json of its 16 rows (one character each, no merges), so that a text runs.
#
#   cmake -DATTN=path/to/attn -DSOURCE_DIR=repo -DWORK_DIR=scratch/folder -P stored_weights.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(tokenizer [=[{"added_tokens": [], "normalizer": null, "pre_tokenizer": null, "decoder": null, "post_processor": null,
 "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, "byte_fallback": false,
  "vocab": {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "g": 6, "h": 7, "i": 8, "j": 9, "k": 10, "l": 11,
            "m": 12, "n": 13, "o": 14, " ": 15}, "merges": []}}
]=])

set(failures "")
set(compared 0)
# run(OUT ARGS...): attn ARGS with its stdout in WORK_DIR/OUT, its weights kept as stored
# (with STORED_ENV's variable set), then again widened at load into OUT.widened; the outputs
# (and the FILES written) must be the same bytes.
function(same_both_ways out)
  cmake_parse_arguments(R "" "STORED_ENV" "FILES" ${ARGN})
  foreach(mode stored widened)
    set(env ${R_STORED_ENV})
    if(mode STREQUAL "widened")
      set(env ATTN_WIDEN_WEIGHTS=1)
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${ATTN} ${R_UNPARSED_ARGUMENTS}
                    WORKING_DIRECTORY ${WORK_DIR} INPUT_FILE /dev/null OUTPUT_FILE ${WORK_DIR}/${out}.${mode}
                    ERROR_VARIABLE err RESULT_VARIABLE code)
    if(NOT code STREQUAL "0")
      message(FATAL_ERROR "${out} (${mode}): attn ${R_UNPARSED_ARGUMENTS} exited with ${code}:\n${err}")
    endif()
    foreach(f IN LISTS R_FILES)
      file(RENAME ${WORK_DIR}/${f} ${WORK_DIR}/${f}.${mode})
    endforeach()
  endforeach()
  foreach(f ${out} ${R_FILES})
    file(SHA256 ${WORK_DIR}/${f}.stored stored)
    file(SHA256 ${WORK_DIR}/${f}.widened widened)
    file(SIZE ${WORK_DIR}/${f}.stored size)
    if(NOT stored STREQUAL widened)
      set(failures "${failures}\n  ${f}: kept as stored differs from widened at load" PARENT_SCOPE)
    elseif(size EQUAL 0 AND NOT (f STREQUAL out AND "${R_UNPARSED_ARGUMENTS}" MATCHES "--quiet"))
      set(failures "${failures}\n  ${f}: empty" PARENT_SCOPE)
    endif()
    file(REMOVE ${WORK_DIR}/${f}.stored ${WORK_DIR}/${f}.widened)
  endforeach()
  math(EXPR n "${compared} + 1")
  set(compared ${n} PARENT_SCOPE)
endfunction()

set(checkpoints gpt2_f32 gpt2_f16_prefixed gpt2_bf16_prefixed gpt2_f32_untied gpt2_f64 llama_f32 llama_bf16
                llama_f16_tied qwen2_bf16 qwen3_f32)
foreach(name IN LISTS checkpoints)
  set(dir ${WORK_DIR}/${name})
  file(COPY ${SOURCE_DIR}/tests/reference/hf_checkpoints/${name}/config.json
            ${SOURCE_DIR}/tests/reference/hf_checkpoints/${name}/model.safetensors DESTINATION ${dir})
  file(WRITE ${dir}/tokenizer.json "${tokenizer}")
  same_both_ways(${name}.walkthrough explain --model ${dir} "bad cafe")
  same_both_ways(${name}.full explain --model ${dir} "bad cafe" --full --color never)
  same_both_ways(${name}.json explain --model ${dir} "bad cafe" --quiet --dump t.json --dump-parameters yes FILES t.json)
  same_both_ways(${name}.npz explain --model ${dir} "bad cafe" --dump t.npz --dump-parameters yes FILES t.npz)
  same_both_ways(${name}.html explain --model ${dir} "bad cafe" --quiet --html t.html FILES t.html)
  same_both_ways(${name}.lens explain --model ${dir} "bad cafe" --lens --ablate 0.1)
  same_both_ways(${name}.heads heads --model ${dir} "bad bad")
  same_both_ways(${name}.validate validate --model ${dir})
  same_both_ways(${name}.generate generate --model ${dir} "bad" -n 3)
  same_both_ways(${name}.panels generate --model ${dir} "bad" -n 3 --quiet --dump g.json FILES g.json
                 STORED_ENV ATTN_PANELS=1)
endforeach()

if(NOT compared EQUAL 100)
  set(failures "${failures}\n  ${compared} runs compared, expected 100")
endif()
if(failures)
  message(FATAL_ERROR "weights kept as stored against widened at load:${failures}")
endif()
message(STATUS "${compared} runs: the same bytes kept as stored and widened at load")
