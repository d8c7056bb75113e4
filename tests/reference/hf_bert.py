"""BERT's tiny checkpoints and what they compute, for make_hf_checkpoints.py.

The forward below follows transformers' models/bert/modeling_bert.py step by step, in
float64 on the stored values widened exactly (transformers itself is not installed here):
BertEmbeddings (inputs_embeds + token_type_embeddings, then += position_embeddings, then
LayerNorm with config.layer_norm_eps), BertSelfAttention (query/key/value nn.Linear,
transpose_for_scores, scores / sqrt(head size), + the extended attention mask (1 - mask) *
finfo.min when a batch is padded, softmax, context), BertSelfOutput (LayerNorm(dense(x) +
input)), BertIntermediate (ACT2FN[hidden_act]: "gelu" is the exact erf form, F.gelu),
BertOutput (LayerNorm(dense(x) + input)), then BertLMPredictionHead (transform: dense,
act, LayerNorm; decoder: x @ word_embeddings^T + cls.predictions.bias). A BertModel file
has no head: its output is the last layer's hidden states.

The gradients of `attn grad` come from torch.autograd on the same float64 weights: the loss
is the mean cross-entropy of the labels over the positions (F.cross_entropy), as attn's.
"""
import numpy as np
import torch
import torch.nn.functional as F

# A vocabulary a learner can read: the CLI test tokenizes "The cat sat on the [MASK]." with it
# (vocab.txt, BertTokenizer's rules: lower case, punctuation apart, [CLS] ... [SEP]).
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", ".", "dog", "a", "rug",
         "ran", "##s", "big", "red", "and", "was"]
# "The cat sat on the [MASK]." as BERT's tokenizer reads it with VOCAB: [CLS] the cat sat on
# the [MASK] . [SEP] (the ids @lenml/tokenizers gives, tokenizers/bert_tiny.json)
IDS = [2, 5, 6, 7, 8, 5, 4, 10, 3]
LABELS = [2, 5, 6, 7, 8, 5, 9, 10, 3]  # "The cat sat on the mat.": attn grad's labels
MASK_POSITION = 6

BERT = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": len(VOCAB), "hidden_size": 8,
        "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 12, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 16,
        "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
        "position_embedding_type": "absolute", "use_cache": True, "classifier_dropout": None}


def act(c, x):
    """ACT2FN[config.hidden_act]: gelu (erf), relu, gelu_new (tanh)."""
    name = c.get("hidden_act", "gelu")
    if name == "gelu":
        return F.gelu(x)
    if name == "relu":
        return F.relu(x)
    return 0.5 * x * (1.0 + torch.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def norm_names(legacy):
    return (".gamma", ".beta") if legacy else (".weight", ".bias")


def layer_norm(w, name, x, c, legacy):
    g, b = norm_names(legacy)
    N = c["hidden_size"]
    return F.layer_norm(x, (N,), w[name + g], w[name + b], c.get("layer_norm_eps", 1e-12))


def bert_forward(c, w, ids, prefix, head, legacy=False, attention_mask=None, head_mask=None):
    """ids (B,S) -> (logits (B,S,V) or the last hidden states (B,S,N), [weights (B,H,S,S)] per layer).
    head_mask (layers, H), as BertModel's: each head's attention probabilities times it (0:
    the head's context is zero, attn's --ablate)."""
    p = prefix
    N, H = c["hidden_size"], c["num_attention_heads"]
    d = N // H
    B, S = ids.shape
    e = p + "embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "token_type_embeddings.weight"][torch.zeros_like(ids)]
    x = x + w[e + "position_embeddings.weight"][torch.arange(S)][None]
    x = layer_norm(w, e + "LayerNorm", x, c, legacy)
    extended = None
    if attention_mask is not None:  # get_extended_attention_mask: (B,1,1,S)
        extended = (1.0 - attention_mask[:, None, None, :].double()) * torch.finfo(torch.float64).min
    attentions = []
    for i in range(c["num_hidden_layers"]):
        L = f"{p}encoder.layer.{i}."
        lin = lambda t, n: F.linear(t, w[L + n + ".weight"], w[L + n + ".bias"])  # noqa: E731
        q, k, v = (lin(x, "attention.self." + n).view(B, S, H, d).permute(0, 2, 1, 3) for n in ("query", "key", "value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / np.sqrt(d)
        if extended is not None:
            scores = scores + extended
        probs = F.softmax(scores, dim=-1)
        attentions.append(probs)
        if head_mask is not None:
            probs = probs * head_mask[i][None, :, None, None]
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, S, N)
        x = layer_norm(w, L + "attention.output.LayerNorm", lin(ctx, "attention.output.dense") + x, c, legacy)
        hidden = act(c, lin(x, "intermediate.dense"))
        x = layer_norm(w, L + "output.LayerNorm", lin(hidden, "output.dense") + x, c, legacy)
    if not head:
        return x, attentions
    h = "cls.predictions."
    t = act(c, F.linear(x, w[h + "transform.dense.weight"], w[h + "transform.dense.bias"]))
    t = layer_norm(w, h + "transform.LayerNorm", t, c, legacy)
    decoder = w[e + "word_embeddings.weight"] if c.get("tie_word_embeddings", True) else w[h + "decoder.weight"]
    return t @ decoder.T + w[h + "bias"], attentions


def bert_weights(c, rng, prefix, head, legacy=False, extras=False):
    """{name: float64 array} as save_pretrained names them; `extras`: a BertForPreTraining
    file's pooler, next-sentence head, position_ids buffer and stored tied decoder."""
    N, F_, V, P, T = (c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["max_position_embeddings"],
                      c["type_vocab_size"])
    r = lambda *shape, s=0.5: rng.standard_normal(shape) * s  # noqa: E731
    g, b = norm_names(legacy)
    e = prefix + "embeddings."
    w = {e + "word_embeddings.weight": r(V, N), e + "position_embeddings.weight": r(P, N, s=0.3),
         e + "token_type_embeddings.weight": r(T, N, s=0.3), e + "LayerNorm" + g: 1 + r(N, s=0.2),
         e + "LayerNorm" + b: r(N, s=0.1)}
    for i in range(c["num_hidden_layers"]):
        L = f"{prefix}encoder.layer.{i}."
        for n in ("query", "key", "value"):
            w[L + f"attention.self.{n}.weight"], w[L + f"attention.self.{n}.bias"] = r(N, N), r(N, s=0.2)
        w[L + "attention.output.dense.weight"], w[L + "attention.output.dense.bias"] = r(N, N), r(N, s=0.1)
        w[L + "attention.output.LayerNorm" + g], w[L + "attention.output.LayerNorm" + b] = 1 + r(N, s=0.2), r(N, s=0.1)
        w[L + "intermediate.dense.weight"], w[L + "intermediate.dense.bias"] = r(F_, N), r(F_, s=0.1)
        w[L + "output.dense.weight"], w[L + "output.dense.bias"] = r(N, F_), r(N, s=0.1)
        w[L + "output.LayerNorm" + g], w[L + "output.LayerNorm" + b] = 1 + r(N, s=0.2), r(N, s=0.1)
    if extras or not head:
        w[prefix + "pooler.dense.weight"], w[prefix + "pooler.dense.bias"] = r(N, N), r(N, s=0.1)
    if head:
        h = "cls.predictions."
        w[h + "transform.dense.weight"], w[h + "transform.dense.bias"] = r(N, N), r(N, s=0.1)
        w[h + "transform.LayerNorm" + g], w[h + "transform.LayerNorm" + b] = 1 + r(N, s=0.2), r(N, s=0.1)
        w[h + "bias"] = r(V, s=0.3)
        if not c.get("tie_word_embeddings", True):
            w[h + "decoder.weight"] = r(V, N)
        elif extras:  # the tied decoder stored again, as old checkpoints have it
            w[h + "decoder.weight"] = w[e + "word_embeddings.weight"]
    if extras:
        w["cls.seq_relationship.weight"], w["cls.seq_relationship.bias"] = r(2, N), r(2, s=0.1)
    return w


def attn_parameter_names(c, prefix, head, legacy=False):
    """attn's name of each weight's gradient (grad.<path>, attn/parameters.h's order) -> the
    checkpoint tensor it is (transposed for nn.Linear weights)."""
    g, b = norm_names(legacy)
    e = prefix + "embeddings."
    out = [("embedding", e + "word_embeddings.weight", False), ("positions", e + "position_embeddings.weight", False),
           ("token_types", e + "token_type_embeddings.weight", False),
           ("embedding_norm.gamma", e + "LayerNorm" + g, False), ("embedding_norm.beta", e + "LayerNorm" + b, False)]
    for i in range(c["num_hidden_layers"]):
        L, a = f"{prefix}encoder.layer.{i}.", f"encoder.{i}."
        for k, n in (("W_q", "query"), ("W_k", "key"), ("W_v", "value")):
            out.append((a + "attention." + k, L + f"attention.self.{n}.weight", True))
        out.append((a + "attention.W_o", L + "attention.output.dense.weight", True))
        for k, n in (("b_q", "query"), ("b_k", "key"), ("b_v", "value")):
            out.append((a + "attention." + k, L + f"attention.self.{n}.bias", False))
        out.append((a + "attention.b_o", L + "attention.output.dense.bias", False))
        out += [(a + "norm1.gamma", L + "attention.output.LayerNorm" + g, False),
                (a + "norm1.beta", L + "attention.output.LayerNorm" + b, False),
                (a + "ffn.W_1", L + "intermediate.dense.weight", True), (a + "ffn.b_1", L + "intermediate.dense.bias", False),
                (a + "ffn.W_2", L + "output.dense.weight", True), (a + "ffn.b_2", L + "output.dense.bias", False),
                (a + "norm2.gamma", L + "output.LayerNorm" + g, False), (a + "norm2.beta", L + "output.LayerNorm" + b, False)]
    if head:
        h = "cls.predictions."
        out += [("output.transform.W", h + "transform.dense.weight", True),
                ("output.transform.b", h + "transform.dense.bias", False),
                ("output.transform_norm.gamma", h + "transform.LayerNorm" + g, False),
                ("output.transform_norm.beta", h + "transform.LayerNorm" + b, False)]
        if not c.get("tie_word_embeddings", True):
            out.append(("output.W", h + "decoder.weight", True))
        out.append(("output.b", h + "bias", False))
    return out


def bert_gradients(c, exact, prefix, legacy=False):
    """The loss of LABELS and dL/d(every weight), by torch.autograd, under attn's names."""
    w = {k: v.clone().requires_grad_(True) for k, v in exact.items() if v.dtype == torch.float64}
    logits, _ = bert_forward(c, w, torch.tensor([IDS]), prefix, True, legacy)
    logits.retain_grad()
    loss = F.cross_entropy(logits[0], torch.tensor(LABELS))
    loss.backward()
    grads = [{"name": "loss", "data": [loss.item()]}, {"name": "grad.output.logits", "data": logits.grad[0].reshape(-1).tolist()}]
    for name, tensor, transposed in attn_parameter_names(c, prefix, True, legacy):
        gr = w[tensor].grad
        grads.append({"name": "grad." + name, "data": (gr.T if transposed else gr).reshape(-1).tolist()})
    return grads


def check_layers_against_torch_nn(c, w, prefix, legacy=False):
    """BertLayer is torch.nn.TransformerEncoderLayer with norm_first=False (post-norm) and
    the config's activation: the encoder's hidden states and every attention weight of bert_forward, from the
    same embeddings, must agree with those modules' own forward (float64, train() mode with
    dropout 0, so that the fast path is not taken) to 1e-12. Returns the worst difference."""
    N, H, F_ = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
    g, b = norm_names(legacy)
    ids = torch.tensor([IDS])
    x = bert_forward(dict(c, num_hidden_layers=0), w, ids, prefix, False, legacy)[0]
    hidden, attentions = bert_forward(c, w, ids, prefix, False, legacy)
    worst = 0.0
    for i in range(c["num_hidden_layers"]):
        L = f"{prefix}encoder.layer.{i}."
        layer = torch.nn.TransformerEncoderLayer(N, H, F_, dropout=0.0, activation=lambda t: act(c, t),
                                                 layer_norm_eps=c.get("layer_norm_eps", 1e-12), batch_first=True,
                                                 norm_first=False, dtype=torch.float64)
        layer.train()
        with torch.no_grad():
            a = layer.self_attn
            a.in_proj_weight.copy_(torch.cat([w[L + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]))
            a.in_proj_bias.copy_(torch.cat([w[L + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]))
            a.out_proj.weight.copy_(w[L + "attention.output.dense.weight"])
            a.out_proj.bias.copy_(w[L + "attention.output.dense.bias"])
            layer.norm1.weight.copy_(w[L + "attention.output.LayerNorm" + g])
            layer.norm1.bias.copy_(w[L + "attention.output.LayerNorm" + b])
            layer.linear1.weight.copy_(w[L + "intermediate.dense.weight"])
            layer.linear1.bias.copy_(w[L + "intermediate.dense.bias"])
            layer.linear2.weight.copy_(w[L + "output.dense.weight"])
            layer.linear2.bias.copy_(w[L + "output.dense.bias"])
            layer.norm2.weight.copy_(w[L + "output.LayerNorm" + g])
            layer.norm2.bias.copy_(w[L + "output.LayerNorm" + b])
            weights = a(x, x, x, need_weights=True, average_attn_weights=False)[1]
            worst = max(worst, (weights - attentions[i]).abs().max().item())
            x = layer(x)
    worst = max(worst, (x - hidden).abs().max().item())
    if not worst <= 1e-12:
        raise SystemExit(f"bert_forward's encoder differs from torch.nn.TransformerEncoderLayer by {worst}")
    return worst
