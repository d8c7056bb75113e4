# Issue 31 (truth round 4): what attackers and learners found in the real-model features,
# each kept by a test. Included from tests/cli/CMakeLists.txt.
function(attn_round4_test name)
  add_test(NAME cli.round4.${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hostile_round4.sh ${name} $<TARGET_FILE:attn>
                   ${CMAKE_CURRENT_BINARY_DIR}/round4 ${PROJECT_SOURCE_DIR})
endfunction()

# --- outputs never replace a file the run reads -------------------------------------------------
# --html, --dump, -o, --log over a model folder's files, a Hub-cache snapshot's blobs (through
# their links), refs/main, the training data: refused in one line, the file left as it was.
attn_round4_test(outputs_over_model_folder)
attn_round4_test(outputs_over_cache_blobs)
attn_round4_test(outputs_over_training_data)

# --- hangs --------------------------------------------------------------------------------------
# An empty Metaspace replacement looped forever: tokenizers' char, refused naming the field.
attn_round4_test(metaspace_empty_replacement)
# refs/main as a FIFO blocked in the read: a regular file only.
attn_round4_test(refs_main_fifo)

# --- tokenizing is bounded and counted -----------------------------------------------------------
# Added tokens in one pass (a trie), the text's growth through the normalizer and pre-tokenizer
# counted against --max-memory (which tokenize takes), a text past the model's positions.
attn_round4_test(added_tokens_one_pass)
attn_round4_test(text_growth_counted)
attn_round4_test(text_past_positions)
# --- side files counted before they are parsed ------------------------------------------------
attn_round4_test(side_files_counted)

# --- estimates never below zero -------------------------------------------------------------------
# A sharded BF16 Llama with an untied head opens (its estimate wrapped to 2^64) and gives the
# reference's logits.
attn_round4_test(untied_bf16_sharded)
