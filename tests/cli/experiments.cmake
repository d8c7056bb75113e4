# attn patch, attn attribute and explain --lens --answer (docs/experiments.md): their
# output on the induction model, and bad input refused in one line with exit code 2.
# Included from tests/cli/CMakeLists.txt (attn_cli_test).
set(clean "<BOS> a b c d e f a b c d e")
set(corrupt "<BOS> a b c d q f a b c d e")
attn_cli_test(patch_induction ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f EXIT 0
              EXPECT_FILE ${CMAKE_CURRENT_SOURCE_DIR}/expected/patch_induction.txt)
attn_cli_test(patch_induction_json ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f
              --wrong q --sites head --json EXIT 0
              MATCH "^\\{\"metric\":\"logit_diff\",\"clean\":[-0-9.e]+,\"corrupt\":[-0-9.e]+,\"sites\":\\[\\{\"kind\":\"head\",\"layer\":0,\"head\":0,\"value\":[-0-9.e]+\\},.*\\{\"kind\":\"head\",\"layer\":1,\"head\":1,\"value\":[-0-9.e]+\\}\\]\\}\n$")
attn_cli_test(patch_induction_positions ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f
              --sites resid_pre --positions 5-6 --json EXIT 0
              MATCH "\"layer\":0,\"position\":5,.*\"layer\":1,\"position\":6,\"value\":[-0-9.e]+\\}.\\}\n$"
              NOT_MATCH "\"position\":[0-47-9]")
attn_cli_test(patch_site ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f --site resid_pre,1,6
              EXIT 0 MATCH "site resid_pre L1 p6: the entry decoder.0.output, row 6\n.*normalised effect = \\(m - m_corrupt\\) / \\(m_clean - m_corrupt\\) = ")
attn_cli_test(patch_html ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f --sites head
              --html ${CMAKE_CURRENT_BINARY_DIR}/patch.html EXIT 0 MATCH "head L0 H1 1.00")
attn_cli_test(patch_unequal_lengths ARGS patch -e induction --clean ${clean} --corrupt "<BOS> a b" --answer f EXIT 2
              STDERR "^--corrupt: expected as many tokens as the clean text's 12, found 3: the runs are compared position by position\n$")
attn_cli_test(patch_multi_token_answer ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer "f g"
              EXIT 2 STDERR "^--answer: expected one token of the model's vocabulary, found \"f g\", 2 tokens: f g\n$")
attn_cli_test(patch_unknown_site_kind ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f
              --sites resid EXIT 2 STDERR "^--sites: expected resid_pre, attn_out, mlp_out or head, found \"resid\"\n$")
attn_cli_test(patch_site_past_layers ARGS patch -e induction --clean ${clean} --corrupt ${corrupt} --answer f
              --site head,2,0 EXIT 2 STDERR "^--site: expected a layer 0..1, found 2\n$")
string(REPEAT " a b c d e f" 100 long_clean)
string(REPEAT " a b c d q f" 100 long_corrupt)
attn_cli_test(patch_memory ARGS patch -e induction --clean "<BOS>${long_clean}" --corrupt "<BOS>${long_corrupt}" --answer f
              --max-memory 0.01 EXIT 2
              STDERR "^attn patch: the runs would need about [0-9.]+ MiB \\(S=601, d_model=32, layers=2\\), more than the limit of 10.2 MiB; use shorter texts or raise --max-memory\n$")
attn_cli_test(attribute_post_norm ARGS attribute -e induction ${clean} --answer f EXIT 2
              STDERR "^attn attribute: this model is post-norm \\(a LayerNorm after every residual add\\), so its last residual is a norm of the sum, not a sum of what each block wrote: nothing to attribute directly\n$")
attn_cli_test(attribute_gpt2_json ARGS attribute --model ${gpt2_checkpoint} "When Mary and John went to the store, John gave a drink to"
              --answer " Mary" --wrong " John" --json EXIT 0
              MATCH "^\\{\"metric\":\"logit_diff\",\"total\":-0.0655517[0-9]+,\"components\":\\[\\{\"name\":\"embed\",.*\\{\"name\":\"final_norm_bias\",\"value\":[-0-9.e]+\\}\\]\\}\n$")
attn_cli_test(attribute_multi_token ARGS attribute --model ${gpt2_checkpoint} "When Mary and John went" --answer " Mary and"
              EXIT 2 STDERR "^--answer: expected one token of the model's vocabulary, found \" Mary and\", 2 tokens: ␣Mary ␣and\n$")
attn_cli_test(explain_lens_answer ARGS explain -e induction ${clean} --lens --answer f --steps logit_lens --brief EXIT 0
              MATCH "after layer 0: \"f\" rank 19, logit 0.2066, p 0.0113\n    after layer 1: \"f\" rank 1, logit 10.8485, p 0.9958\n")
attn_cli_test(explain_answer_needs_lens ARGS explain -e induction ${clean} --answer f EXIT 2
              STDERR "^attn: --answer requires --lens \\(run 'attn --help' for usage\\)\n$")
attn_cli_test(patch_no_output_head ARGS patch -e padded_batch --clean "I love AI" --corrupt "you love AI" --answer AI
              EXIT 2 STDERR "^attn patch: this model has no output head, so it has no logits for the metric\n$")
