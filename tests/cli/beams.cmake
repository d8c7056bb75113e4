# attn generate --beams: refusals in one line, the walkthrough's parts, and the answer from a
# text through a real tokenizer against transformers' beam search (beam_reference.py). The
# search itself is checked step by step in tests/session/beam_search_test.cpp.
set(translate ${PROJECT_SOURCE_DIR}/data/examples/trained_translate.json)
attn_cli_test(beams_zero ARGS generate "I love AI" --beams 0 EXIT 2
              STDERR "^--beams: expected at least 1 \\(1: greedy search\\), found 0\n$")
attn_cli_test(beams_too_many ARGS generate "I love AI" --beams 65 EXIT 2
              STDERR "^--beams: expected at most 64 beams, found 65\n$")
attn_cli_test(beams_sampled ARGS generate "I love AI" --beams 2 --temperature 0.7 EXIT 2
              STDERR "^--beams: expected greedy choices beside beam search, found a sampling option \\(--temperature, --top-k, --top-p\\): beam search keeps the most probable sequences and draws nothing\n$")
attn_cli_test(beams_top_k ARGS generate "I love AI" --beams 2 --top-k 3 EXIT 2
              STDERR "^--beams: expected greedy choices beside beam search")
attn_cli_test(beams_no_cache ARGS generate "I love AI" --beams 2 --no-cache EXIT 2
              STDERR "^--no-cache: expected the KV cache beside --beams, found --no-cache: each beam has its own\n$")
attn_cli_test(beams_dump ARGS generate "I love AI" --beams 2 --dump beams_dump.json EXIT 2
              STDERR "^--dump: expected no --dump beside --beams: the dump holds one sequence's steps\n$")
attn_cli_test(beams_html ARGS generate "I love AI" --beams 2 --html beams.html EXIT 2
              STDERR "^--html: expected no --html beside --beams: the lesson's page shows one sequence\n$")
attn_cli_test(beams_length_penalty_nan ARGS generate "I love AI" --beams 2 --length-penalty nan EXIT 2
              STDERR "^attn: --length-penalty: expected a finite number \\(of any sign\\), found nan \\(run 'attn --help' for usage\\)\n$")
attn_cli_test(beams_early_stopping_unknown ARGS generate "I love AI" --beams 2 --early-stopping maybe EXIT 2
              STDERR "--early-stopping")
# The walkthrough: the heading says how tokens are chosen; each step's table of candidates and
# what became of them; the hypotheses with their scores worked out; the answer.
attn_cli_test(beams_walkthrough ARGS generate -c ${translate} "I love AI" --beams 3 -n 6 --brief EXIT 0
              ENV "COLUMNS=200"
              MATCH "beam search \\(3 beams, length penalty 1, early stopping false\\).*══ Token 1: 3 beams, each followed by every token: the 6 best of [0-9]+ candidates ══\nrank +beam +sequence +\\+ token +log p +score +what it becomes\n +1 +0 +\\(prompt\\) .*beam 0\n.*══ The [1-3] hypotheses kept, best first: score = sum of log p / length\\^1 ══.*Generated [0-9]+ tokens? by beam search")
# --json: the answer's ids, text and score, and the hypotheses kept.
attn_cli_test(beams_json ARGS generate -c ${translate} "I love AI" --beams 2 -n 6 --json EXIT 0 STDERR "^$"
              MATCH "^\\{\"hypotheses\":\\[\\{\"ended\":(true|false),\"ids\":\\[[0-9,]+\\],\"score\":-[0-9.e-]+,\"text\":\"[^\"]*\"\\}.*\\],\"ids\":\\[[0-9,]+\\],\"score\":-[0-9.e-]+,\"text\":\"[^\"]*\"\\}\n$")
add_test(NAME cli.beams_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/beam_reference.py $<TARGET_FILE:attn> ${PROJECT_SOURCE_DIR})
