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
              MATCH "note: [0-9] of the 6 words are not among the 85 tokens this model knows, so its output means little: 'attn vocab' lists the words it learned \\(with -c FILE: a model file's\\); a real model, trained on a language, knows tens of thousands")
attn_cli_test(unknown_words_generate ARGS generate "The cat sat on the mat" EXIT 0 ENV "COLUMNS=250"
              MATCH "[0-9] of the 6 words are not among the 85 tokens this model knows, so its output means little")
attn_cli_test(known_words_no_warning ARGS explain "I love AI" --steps tokens --linewidth 250 EXIT 0
              NOT_MATCH "its output means little")

# --- numbers that mean nothing, refused by name (round 3, second part) --------------------------
set(sgd_case -c ${torch_train}/sgd_momentum_clip.json --data ${torch_train}/sgd_momentum_clip.jsonl)
# nan and inf passed CLI11's own checks (nan compares false), and --lr inf printed DBL_MAX in 309
# digits: each is one short line naming the option.
foreach(option_value "lr;nan;> 0" "lr;inf;> 0" "lr;1e400;> 0" "weight-decay;nan;>= 0" "clip;nan;> 0"
                     "clip;-inf;> 0" "momentum;nan;from 0 to 1" "momentum;inf;from 0 to 1")
  list(GET option_value 0 option)
  list(GET option_value 1 value)
  list(GET option_value 2 range)
  string(REPLACE ">" "\\>" range_re "${range}")
  string(MAKE_C_IDENTIFIER "${option}_${value}" id)
  attn_cli_test(train_refuses_${id} ARGS train ${sgd_case} --optimizer sgd --${option} ${value} -o never.json EXIT 2
                STDERR "^attn: --${option}: expected a finite number ${range}, found ${value} \\(run 'attn --help' for usage\\)\n$")
endforeach()
foreach(value inf nan 1e400 -1)
  string(MAKE_C_IDENTIFIER "${value}" id)
  attn_cli_test(generate_temperature_${id} ARGS generate "I love AI" --temperature ${value} EXIT 2
                STDERR "^attn: --temperature: expected a finite number >= 0 \\(0: greedy, the most probable token\\), found ${value} \\(run 'attn --help' for usage\\)\n$")
endforeach()
# 1e-320 (a denormal): logits / T overflow, which made the distribution NaN and drew the last
# token forever ("drawn from nan"). It is the greedy limit: all the probability on the largest
# logit, the same tokens as greedy ("J'ai" ... for "I love AI" on the translator).
attn_cli_test(generate_temperature_denormal ARGS generate -c ${PROJECT_SOURCE_DIR}/data/examples/trained_translate.json
              "I love AI" --temperature 1e-320 -n 4 --quiet EXIT 0 STDERR "^$" MATCH "^J' aime l' IA\n$")
attn_cli_test(generate_temperature_denormal_no_nan ARGS generate -c ${PROJECT_SOURCE_DIR}/data/examples/trained_translate.json
              "I love AI" --temperature 1e-320 -n 2 EXIT 0 ENV "COLUMNS=200" NOT_MATCH "nan")
# --epochs times the batches of an epoch wrapped around 2^64 (9223372036854775809 x 2 = 2 steps).
attn_cli_test(train_epochs_overflow ARGS train ${sgd_case} --batch-size 4 --epochs 9223372036854775809 -o never.json EXIT 2
              STDERR "^attn train: --epochs: expected at most 9223372036854775807 epochs of 2 batches \\(a step count that fits in 64 bits\\), found 9223372036854775809\n$")
# --task sizes of 0 silently meant the task's own size.
foreach(size d-model heads d-ff layers)
  attn_cli_test(train_task_${size}_zero ARGS train --task copy --${size} 0 -o never.json EXIT 2
                STDERR "^attn train: --${size}: expected a positive integer, found 0 \\(leave the option out for the task's own size\\)\n$")
endforeach()
# The hint names an option that exists (it named --beta1, which attn has never had).
attn_cli_test(train_momentum_hint ARGS train ${sgd_case} --momentum 0.9 -o never.json EXIT 2
              STDERR "^attn train: --momentum: only SGD takes a momentum: add --optimizer sgd \\(Adam and AdamW keep their own, torch's beta1 0\\.9\\)\n$")

# --- train's outputs: checked before the work, committed only when all succeeded --------------
attn_hostile_test(train_outputs_full_stdout ${torch_train})
attn_hostile_test(train_output_folder_missing)
attn_hostile_test(train_model_to_stdout ${torch_train})
# -o - and --log - would both be standard output.
attn_cli_test(train_output_and_log_stdout ARGS train ${sgd_case} --steps 1 -o - --log - EXIT 2
              STDERR "^-o: expected another file than --log's, found the same: - \\(standard output\\)\n$")

# --- memory: estimated before it is allocated ----------------------------------------------------
attn_hostile_test(long_text_refused_fast)
# attn train counts what it reads as it reads it: each data line's numbers are made only when
# they fit what the lines before left of the limit (40 lines of 16 MiB zeros took 5.6 GB);
# a --task's model is made against --max-memory (d_ff 16777216: 6 GB, then "out of memory").
attn_cli_test(train_data_line_zeros ARGS train -c ${CMAKE_CURRENT_SOURCE_DIR}/input/wide_numbers.json
              --data ${CMAKE_CURRENT_SOURCE_DIR}/bad/zeros_x_lines.jsonl --max-memory 0.1 -o never.json EXIT 2
              STDERR "^[^\n]*zeros_x_lines.jsonl:1: X: this run would need about 496\\.1 MiB \\(B=1, S=2048, d_model=1024, heads=1, layers=1\\), more than the limit of 102\\.4 MiB; use a smaller model or raise --max-memory\n$")
attn_cli_test(train_task_max_memory ARGS train --task copy --d-ff 16777216 --max-memory 1 -o never.json EXIT 2
              STDERR "^task copy: model: the weights alone would need about 17\\.0 GiB \\(d_model=16, heads=2, d_ff=16777216, layers=2, vocab=14\\), more than the limit of 1\\.0 GiB; use a smaller model or raise --max-memory\n$")
# generate has --max-memory, and counts the prompt and the -n new tokens.
attn_cli_test(generate_max_memory ARGS generate "I love AI" -n 100000000 --max-memory 0.5 EXIT 2
              STDERR "^<default model>: text \\(command line\\): this run would need about [0-9.]+ GiB \\(B=1, S=3, T=100000001, d_model=6, heads=2, layers=2\\), more than the limit of 512\\.0 MiB; use a shorter text or raise --max-memory\n$")
# ... and with --dump, whose steps are counted, not listed (a hundred million of them once
# took the estimate itself out of memory): the npz's list of them besides.
attn_cli_test(generate_dump_max_memory ARGS generate "I love AI" -n 100000000 --dump never.npz --max-memory 0.5 EXIT 2
              STDERR "^<default model>: text \\(command line\\): this run would need about [0-9.]+ GiB \\(B=1, S=3, T=100000001, d_model=6, heads=2, layers=2\\), more than the limit of 512\\.0 MiB; use a shorter text or raise --max-memory\n$")
# HTML pages are estimated before they are built: generate's grows with the square of -n.
attn_cli_test(generate_html_max_memory ARGS generate "I love AI" -n 4000 --html never.html --max-memory 2 EXIT 2
              STDERR "^--html: the page would need about [0-9.]+ GiB while it is built \\(about [0-9]+ heatmap cells and [0-9]+ numbers\\), more than the limit of 2\\.0 GiB")
attn_cli_test(explain_html_max_memory ARGS explain -c ${PROJECT_SOURCE_DIR}/data/examples/seed000_batched_mha.json --threshold 100000000
              --full --html never.html --max-memory 0.001 EXIT 2
              STDERR "^--html: the page would need about [0-9.]+ GiB while it is built")

# --- generate on a vocabulary of only <PAD>, <UNK>, <BOS>: exit 2, one line (it was exit 1) -------
attn_cli_test(generate_specials_only ARGS generate -c ${CMAKE_CURRENT_SOURCE_DIR}/bad/specials_only_vocab.json EXIT 2
              STDERR "specials_only_vocab.json: vocab: expected a token the model can write, found only 3 special tokens that no model writes \\(<PAD>, <UNK>, <BOS>\\): there is nothing to generate\n$")

# --- attn vocab: the words the unknown-words note points to ---------------------------------------
attn_cli_test(vocab_default ARGS vocab EXIT 0
              MATCH "^85 tokens in the vocabulary of the built-in model \\(4 special, 81 words\\):\n 0  <PAD>\n 1  <UNK>\n 2  <BOS>\n 3  <EOS>\n")
attn_cli_test(vocab_json ARGS vocab -e seed004 --json EXIT 0 MATCH "^\\[\"<PAD>\",")
attn_cli_test(vocab_numbers_model ARGS vocab -e seed000_batched_mha EXIT 2
              STDERR "vocab: this model has no vocabulary: its input is numbers \\(input.X\\), not words\n$")

# --- grad: --labels and --target imply each other (a training pair) -------------------------------
# The four ways give the same pair, so the same loss: the mean of -log p over the 5 labelled
# positions, worked on the walkthrough as (0.0077 + 0.0038 + 0.1031 + 0.0114 + 0.0213) / 5.
# (--labels alone was refused: "expected 1 label (1 token), found 5"; --target alone: "labels
# missing"; <PAD> padding: "found 7".)
foreach(way "both;--target;<BOS> J' aime l' IA;--labels;J' aime l' IA <EOS>"
            "labels_alone;--labels;J' aime l' IA <EOS>"
            "target_alone;--target;<BOS> J' aime l' IA"
            "labels_padded;--labels;J' aime l' IA <EOS> <PAD> <PAD>")
  list(GET way 0 id)
  list(SUBLIST way 1 -1 args)
  attn_cli_test(grad_pair_${id} ARGS grad "I love AI" ${args} --steps loss --brief --linewidth 200 EXIT 0
                MATCH "L = \\(0\\.0077 \\+ 0\\.0038 \\+ 0\\.1031 \\+ 0\\.0114 \\+ 0\\.0213\\) / 5 = 0\\.0295\n.*L = 0\\.029471\n")
endforeach()
