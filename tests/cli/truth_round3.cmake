# Issue 24 (truth round 3): each promise a new user, a learner or an attacker found broken,
# kept by a test. Included from tests/cli/CMakeLists.txt (attn_cli_test, attn_hostile_test).
set(torch_train ${PROJECT_SOURCE_DIR}/tests/reference/torch_train)

# --- output promises ---------------------------------------------------------------------
# File names with control bytes reach standard output escaped, as the error messages do.
attn_hostile_test(control_bytes_file_names ${PROJECT_SOURCE_DIR})
attn_hostile_test(huge_thread_count)
# Outputs are compared by the file they lead to, not by their spelling.
attn_cli_test(html_same_file_as_dump ARGS explain --quiet --dump same.json --html ./same.json EXIT 2
              STDERR "^--html: expected another file than --dump's, found the same: \\./same.json\n$")
attn_cli_test(train_output_is_log ARGS train -c ${torch_train}/sgd_momentum_clip.json --data ${torch_train}/sgd_momentum_clip.jsonl
              --steps 1 -o x.json --log ./x.json EXIT 2
              STDERR "^-o: expected another file than --log's, found the same: x.json\n$")
# -o over the training data (spelled another way) would replace it: refused, even with -f.
attn_cli_test(train_output_is_data ARGS train -c ${torch_train}/sgd_momentum_clip.json
              --data ${torch_train}/sgd_momentum_clip.jsonl --steps 1 -f -o ${torch_train}/../torch_train/sgd_momentum_clip.jsonl
              EXIT 2 STDERR "^-o: expected another file than --data's, found the same: .*/torch_train/\\.\\./torch_train/sgd_momentum_clip.jsonl\n$")

# --- internal errors on bad input ----------------------------------------------------------
# A training set mixing tokens and numbers (X) could not be stacked into one batch (it was
# an internal error, exit 1): refused, naming the line.
attn_cli_test(train_mixed_tokens_and_x ARGS train -c ${torch_train}/sgd_momentum_clip.json
              --data ${CMAKE_CURRENT_SOURCE_DIR}/bad/mixed_tokens_and_x.jsonl --steps 1 -o x.json EXIT 2
              STDERR "mixed_tokens_and_x.jsonl:2: expected text or tokens like line 1, found X: one training set gives every example the same way\n$")

# --- what learners tripped on ----------------------------------------------------------------
# --pause jumping to a step drawn as one line ("11  V_heads = ... (as step 9)") shows it in full.
attn_cli_test(pause_jump_in_full ARGS explain "I love AI" --pause --brief EXIT 0
              INPUT ${CMAKE_CURRENT_SOURCE_DIR}/input/jump_11_q.txt
              MATCH "Step 11: Split V into 2 heads.*\n  1\\. reshape: \\(S=3,H\\*d=6\\) -> \\(S=3,H=2,d=3\\).*\\(stopped at step 11\\)"
              NOT_MATCH "  11  V_heads = ")
# An answer line without end is no one typing: read at most 4096 bytes of it, then the rest
# of the walkthrough is shown (it read all of /dev/zero: 2 GB).
attn_cli_test(pause_endless_line ARGS explain --example seed000 --pause --brief EXIT 0 INPUT /dev/zero
              MATCH "Step 1: Input X.*Step 14: " NOT_MATCH "stopped at")
# The HTML page draws heatmaps of any length, keeps the overview's encoder row, and leaves
# room for <BOS>; the terminal says where the heatmap it leaves out is.
attn_hostile_test(html_long_sentence)
attn_hostile_test(html_label_room)
# A draw shows every token it could pick (top-k 4: four rows, not the default 3), and the
# interval of each, in the vocabulary order the draw adds them up in (np.searchsorted over
# np.cumsum): ids 7, 47, 54, 81, so "ai" before "voient", which the table (by p) has the other
# way. u = 0.550798 is np.random.RandomState(3).random_sample().
attn_cli_test(generate_draw_intervals ARGS generate "I love AI" --temperature 0.8 --top-k 4 -n 1 --seed 3 EXIT 0 ENV "COLUMNS=200"
              MATCH "  3\\. \"voient\" [^\n]*\n  4\\. \"ai\" .*top-k 4: 4 tokens kept.*u = 0\\.550798 .*the intervals, in vocabulary order: \"J'\" \\[0\\., 0\\.9984\\) ← u, \"Je\" \\[0\\.9984, 0\\.9993\\), \"ai\" \\[0\\.9993, 0\\.9995\\), \"voient\" \\[0\\.9995, 1\\.\\)\n")
# With no target, the decoder's greedy picks stop at <EOS> or at the length limit; the line
# under the target's tokens says which ("I love you" never reaches <EOS>).
attn_cli_test(greedy_target_cut ARGS explain "I love you" --steps tokens --linewidth 200 EXIT 0
              MATCH "\\(no target given: the decoder reads <BOS>, then its greedy picks, cut at the length limit before it predicted <EOS>\\)")
attn_cli_test(greedy_target_to_eos ARGS explain "I love AI" --steps tokens --linewidth 200 EXIT 0
              MATCH "\\(no target given: the decoder reads <BOS>, then its greedy picks to <EOS>\\)")

# --- numbers that mean nothing ----------------------------------------------------------------
# SGD with lr and weight decay 1e308: the first update overflows the embedding; training stops
# there, naming the update and the weight, and writes no model (it wrote Infinity literals).
attn_cli_test(train_stops_at_non_finite_weight ARGS train -c ${torch_train}/sgd_momentum_clip.json
              --data ${torch_train}/sgd_momentum_clip.jsonl --steps 5 --optimizer sgd --lr 1e308 --weight-decay 1e308
              -o never_written.json EXIT 2
              STDERR ": update 1: embedding\\[0, 0\\] is -inf \\(overflow\\): training stopped and wrote no model \\(a smaller --lr, or --clip, keeps the weights finite\\)\n$")

# A sentence mostly of words the model never learned: said once, plainly (it gave "Ils Elle
# chat" with one note per word and nothing else). "sat", "on", "mat" and "The"'s case aside,
# at least a quarter of the 6 words are unknown; "I love AI" (all known) gets no such note.
attn_cli_test(unknown_words_warning ARGS explain "The cat sat on the mat" --steps tokens --linewidth 250 EXIT 0
              MATCH "note: [0-9] of the 6 words are not among the 85 tokens this model knows, so its output means little: the model file's \"vocab\" lists the words it learned \\(the built-in model's: docs/default-model.md\\); a real model, trained on a language, knows tens of thousands")
attn_cli_test(unknown_words_generate ARGS generate "The cat sat on the mat" EXIT 0 ENV "COLUMNS=250"
              MATCH "[0-9] of the 6 words are not among the 85 tokens this model knows, so its output means little")
attn_cli_test(known_words_no_warning ARGS explain "I love AI" --steps tokens --linewidth 250 EXIT 0
              NOT_MATCH "its output means little")
