# Reading what a model learned (issue 23, docs/heads.md): the logit lens and ablation from the
# command line. Included by tests/cli/CMakeLists.txt.

# Bad --ablate specs: one line, exit 2, before anything runs.
attn_cli_test(ablate_layer_out_of_range ARGS explain --example induction --ablate 2.0 EXIT 2
              STDERR "^--ablate: expected a layer below 2 \\(the decoder has 2 layers\\), found \"2\\.0\"\n$")
attn_cli_test(ablate_head_out_of_range ARGS heads --example induction --ablate 1.2 EXIT 2
              STDERR "^--ablate: expected a head below 2 \\(H=2\\), found \"1\\.2\"\n$")
attn_cli_test(ablate_malformed ARGS explain --example induction --ablate 1-1 EXIT 2
              STDERR "^--ablate: expected heads as L\\.H, encoder\\.L\\.H or decoder\\.L\\.H [^\n]*found \"1-1\"\n$")
attn_cli_test(ablate_needs_stack ARGS explain "I love AI" --ablate 0.1 EXIT 2
              STDERR "^--ablate: this model has an encoder and a decoder: name the stack, encoder\\.0\\.1 or decoder\\.0\\.1\n$")
attn_cli_test(ablate_mean_alone ARGS explain --example induction --ablate-mean EXIT 2 STDERR "--ablate-mean requires --ablate")
attn_cli_test(lens_without_output_head ARGS explain --example seed000 --lens EXIT 2
              STDERR "^--lens: this model has no output head")

# The lens and the ablation in the walkthrough.
attn_cli_test(lens_table ARGS explain --example induction --lens --steps logit_lens --brief --color never
              EXIT 0 MATCH "Logit lens: the top token at each position after each layer")
attn_cli_test(lens_dump_names ARGS explain --example gpt_tiny --lens --quiet --dump -
              EXIT 0 MATCH "\"lens\\.1\\.norm\".*\"lens\\.1\\.logits\".*\"lens\\.1\\.probabilities\"")
attn_cli_test(ablate_walkthrough ARGS explain --example induction --ablate 0.1 --steps context,probabilities --brief
              --color never EXIT 0 MATCH "Ablated context: head 1 set to zero[^\n]*\n.*without and with the ablation \\(decoder\\.0\\.1 zeroed\\)")
attn_cli_test(ablate_heads_json ARGS heads --example induction --ablate 1.0,1.1 --json
              EXIT 0 MATCH "\"ablation\":\\{\"heads\":\\[\\{\"stack\":\"decoder\",\"layer\":1,\"head\":0\\},\\{\"stack\":\"decoder\",\"layer\":1,\"head\":1\\}\\],\"mean\":false,\"positions\":\\[")
# The HTML page draws the same steps: the ablated context, the side-by-side table, the lens table.
attn_cli_test(lens_ablate_html ARGS explain --example induction --lens --ablate 1.1 --html /dev/stdout -q EXIT 0
              MATCH "context_ablated\\[h\\] = 0.*without and with the ablation \\(decoder\\.1\\.1 zeroed\\).*Logit lens: the top token at each position after each layer")

# The induction lesson (attn explain --example induction, docs/heads.md): after the steps,
# in the terminal and on the page (its tables as <table>s); not when steps are picked.
# (reference.lens_ablation_numpy checks its numbers against NumPy.)
attn_cli_test(induction_lesson ARGS explain --example induction --brief --color never --linewidth 300
              EXIT 0 MATCH "The lesson: an induction circuit.*layer 0 head 1, the previous-token head \\(step 18\\).*layer 1 head 1, the induction head \\(step 41\\): in the rows of the second copy, a stripe 6 positions below the diagonal")
attn_cli_test(induction_lesson_html ARGS explain --example induction --html /dev/stdout -q
              EXIT 0 MATCH "The lesson: an induction circuit.*<table class=\"words\"><caption>each head&#39;s scores on this sequence")
# generate --ablate: zeroed heads in the prompt's run and every cached step; the mean cannot be cached
attn_cli_test(generate_ablate_mean ARGS generate --example induction "<BOS> a b c a" --ablate 0.1 --ablate-mean
              EXIT 2 STDERR "^--ablate-mean: generation runs one new position at a time with the KV cache")
attn_cli_test(generate_ablate_header ARGS generate --example induction "<BOS> a b c a" --ablate 0.1 -n 1 --brief
              --color never EXIT 0 MATCH "ablated: decoder\\.0\\.1 zeroed, in the prompt's run and every step")
# grad --ablate: the backward pass takes the ablation back (reference.lens_ablation_numpy checks
# the loss against NumPy; tests/backward/backward_test.cpp the gradients against central differences)
attn_cli_test(grad_ablate ARGS grad --example induction --ablate 0.1 --steps context --brief --color never
              EXIT 0 MATCH "Ablated context: head 1 set to zero.*heads \\{1\\} were set to zero, so they reached nothing")
