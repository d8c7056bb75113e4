# Issue 31 (truth round 4), the Medium and Low items: each promise an attacker or a learner
# found broken, kept by a test. Included from tests/cli/CMakeLists.txt (attn_cli_test).

# --- a norm's own intermediate overflows ----------------------------------------------------
# Values of 1e160: the variance (or mean square) is 1e320 = inf, so LayerNorm gave beta and
# RMSNorm 0, finite, exit 0. The step and the row are named.
attn_cli_test(layer_norm_variance_overflow ARGS explain -c ${CMAKE_CURRENT_SOURCE_DIR}/bad/norm_overflow.json --quiet
              EXIT 2 STDERR "/bad/norm_overflow.json: encoder.0.norm1\\[1, :\\]: the variance of the row is inf \\(overflow\\): LayerNorm would divide by it and give beta for every value\n$")
attn_cli_test(rms_norm_mean_square_overflow ARGS explain -c ${CMAKE_CURRENT_SOURCE_DIR}/bad/rms_norm_overflow.json --quiet
              EXIT 2 STDERR "/bad/rms_norm_overflow.json: encoder.0.norm1\\[1, :\\]: the mean of the squares of the row is inf \\(overflow\\): RMSNorm would divide by its root and give 0 for every value\n$")

# --- the cases that need a folder or a file: truth_round4b.sh -------------------------------
foreach(case special_token_escaped folder_name_escaped generate_quiet_and_json config_is_directory index_is_fifo
             shard_is_directory weights_is_device config_duplicate_key regex_match_limit html_overview_layers
             grad_causal_loss empty_values_refused)
  add_test(NAME cli.truth_round4b.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/truth_round4b.sh ${case} $<TARGET_FILE:attn>
                   ${CMAKE_CURRENT_BINARY_DIR}/truth_round4b ${PROJECT_SOURCE_DIR})
endforeach()

# --- numbers past their range say the range -----------------------------------------------------
attn_cli_test(seed_past_range ARGS generate --seed 4294967296 EXIT 2
              STDERR "^attn: --seed: expected an integer from 0 to 4294967295 \\(np\\.random\\.seed's range\\), found 4294967296 \\(run 'attn --help' for usage\\)\n$")
attn_cli_test(heads_seed_past_range ARGS heads --seed 99999999999999999999 EXIT 2
              STDERR "^attn: --seed: expected an integer from 0 to 4294967295 \\(np\\.random\\.seed's range\\), found 99999999999999999999 \\(run 'attn --help' for usage\\)\n$")
attn_cli_test(seed_largest ARGS heads --seed 4294967295 EXIT 0 MATCH "^attn heads: ")
# 99999999999999999999 > 2^64 - 1 was read as 9223372036854775807 (sscanf's %lld).
attn_cli_test(cell_past_range ARGS explain --cell 99999999999999999999,0,0,0 EXIT 2
              STDERR "^--cell: expected four non-negative integers b,h,i,j \\(batch, head, row, column\\), found \"99999999999999999999,0,0,0\": 99999999999999999999 is past the largest index, 18446744073709551615\n$")
attn_cli_test(cell_spaces ARGS explain --cell "0, 1, 2, 0" --steps softmax --brief EXIT 0 MATCH "Softmax")
attn_cli_test(cell_five ARGS explain --cell 0,0,0,0,0 EXIT 2
              STDERR "^--cell: expected four non-negative integers b,h,i,j \\(batch, head, row, column\\), found \"0,0,0,0,0\"\n$")

# --- validate --model DIR FILE: FILE is a model file, not a second folder -----------------------
attn_cli_test(validate_model_then_file ARGS validate --model ${PROJECT_SOURCE_DIR}/tests/reference/hf_checkpoints/gpt2_tokenizer_f16
              ${PROJECT_SOURCE_DIR}/data/examples/gpt_tiny.json EXIT 0
              MATCH "gpt_tiny\\.json: valid: decoder-only.*GPT2LMHeadModel from [^\n]*gpt2_tokenizer_f16: 2 layers")

# --- an OMP_NUM_THREADS libgomp cannot read: one line of attn's (libgomp printed two) -----------
# attn names a value libgomp would refuse from the getenv libgomp calls as it loads
# (src/cli/wait_policy.cpp); clang's libomp (the sanitizer build) reads its environment
# itself and only warns, so these hold for GCC's build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  attn_cli_test(omp_threads_invalid ARGS explain --quiet EXIT 2 ENV "OMP_NUM_THREADS=abc"
                STDERR "^OMP_NUM_THREADS: expected a positive number of threads \\(or a list of them, one per nesting level, as 4,2\\), found \"abc\"\n$")
  attn_cli_test(omp_threads_zero ARGS explain --quiet EXIT 2 ENV "OMP_NUM_THREADS=0"
                STDERR "^OMP_NUM_THREADS: expected a positive number of threads .*found \"0\"\n$")
endif()
attn_cli_test(omp_threads_list ARGS explain --quiet --timings EXIT 0 ENV "OMP_NUM_THREADS=1, 2"
              STDERR "\\(1 thread, ")

# --- learners -------------------------------------------------------------------------------------
# The seed's own French: "J'aime" and "l'IA" are <UNK>, and the note says the spelling the
# built-in model knows, its training data's: the elision a word of its own.
attn_cli_test(elision_spelling ARGS explain "J'aime l'IA" --steps tokens --linewidth 200 EXIT 0
              MATCH "note: \"J'aime\" is not in the vocabulary: it becomes <UNK> \\(id 1\\). the vocabulary has it apart, as \"J' aime\" \\(elisions are words of their own\\)\n.*\"l'IA\" is not in the vocabulary: it becomes <UNK> \\(id 1\\). the vocabulary has it apart, as \"l' IA\"")
attn_cli_test(unknown_words_one ARGS explain "I love zyzzyva" --steps tokens --linewidth 300 EXIT 0
              MATCH "note: 1 of the 3 words is not among the 85 tokens this model knows")
# attn tokenize without --model: the built-in model's words (it refused to run).
attn_cli_test(tokenize_built_in ARGS tokenize "I love AI." EXIT 0
              MATCH "^4 tokens \\(words, 85 in the vocabulary, from <default model>\\)\n 4  I\n 5  love\n 6  AI\n 1  <UNK>  \\(special\\)\n$")
attn_cli_test(vocab_marks ARGS vocab -e gpt_tiny EXIT 0 MATCH "^13 tokens in the vocabulary of example gpt_tiny \\([0-9]+ special, [0-9]+ words and 1 mark\\):\n")
# GPT-2's learned positions: the explanation cites the run's own words.
attn_cli_test(learned_positions_cite_input ARGS explain --model ${PROJECT_SOURCE_DIR}/tests/reference/hf_checkpoints/gpt2_tokenizer_f16
              "The cat sat on the mat" --steps positional --linewidth 200 EXIT 0
              MATCH "Attention alone cannot tell \"The cat sat\" from \"sat cat The\"\\. The model learned one row"
              NOT_MATCH "I love AI")
# A long input is named by its first words in the step map (it was repeated whole).
attn_cli_test(step_map_long_input ARGS explain "I love AI I love AI I love AI I love AI I love AI I love AI I love AI I love AI I love AI I love AI"
              --brief --linewidth 300 EXIT 0
              MATCH "source \"I love AI I love AI I love …\" \\(30 tokens\\) -> tokens, embeddings -> X\n")
# A causal model's text of one token has no next token to score: said so.
attn_cli_test(grad_causal_one_token ARGS grad -e gpt_tiny "the" EXIT 2
              STDERR "^example gpt_tiny: input\\.labels: missing: .*, or a text of at least two tokens \\(a causal model's labels are its text's own next tokens\\)\n$")
