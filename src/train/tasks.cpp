// The built-in tasks of attn train --task (docs/training.md, "The tasks"): each makes its
// own seeded training and held-out data and a model that learns it, with the options that
// train it to at least 99% exact match on the held-out set.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/train.h"
#include "core/numpy_random.h"

namespace attn {

namespace {

using Tokens = std::vector<std::string>;

// One pair: the source, the target the decoder reads (<BOS> first) and the labels it learns
// (the target shifted by one, <EOS> last). A decoder-only task has no source: its sequence is
// the target, its labels <PAD> where nothing is learned.
struct Pair {
  Tokens source, target, labels;
};

// The sizes of a task's model (an encoder-decoder unless decoder_only), and for a
// decoder-only one the prompt_template that frames a prompt as the task's sequences are.
struct Sizes {
  std::size_t d_model, heads, d_ff, layers;
  bool decoder_only = false;
  std::string prompt_template;
  std::string positional_encoding = "sinusoidal";
};

// The model file of a task: its vocabulary, its sizes, Xavier weights and an embedding of
// standard deviation 1/√d_model scaled by √d_model (so unit-sized, like the positions);
// `example` is its input.
std::string model_text(const std::string& comment, const Tokens& vocab, const Sizes& s, const Pair& example,
                       std::uint32_t seed) {
  nlohmann::json doc;
  doc["comment"] = comment;
  nlohmann::json model = {{"d_model", s.d_model},   {"num_heads", s.heads}, {"d_ff", s.d_ff},
                          {"num_layers", s.layers}, {"seed", seed},         {"scale_embeddings", true}};
  if (s.decoder_only) model["architecture"] = "decoder-only";
  if (s.positional_encoding != "sinusoidal") model["positional_encoding"] = s.positional_encoding;
  doc["model"] = model;
  doc["vocab"] = vocab;
  if (!s.prompt_template.empty()) doc["prompt_template"] = s.prompt_template;
  doc["embedding"] = {{"randn", {vocab.size(), s.d_model}}, {"std", 1.0 / std::sqrt(static_cast<double>(s.d_model))}};
  if (s.decoder_only) {
    doc["input"] = {{"tokens", example.target}, {"labels", example.labels}};
    doc["decoder"] = "xavier_uniform";
  } else {
    doc["input"] = {{"tokens", example.source}, {"target_tokens", example.target}, {"labels", example.labels}};
    doc["encoder"] = "xavier_uniform";
    doc["decoder"] = "xavier_uniform";
  }
  doc["output"] = "tied";
  return doc.dump();
}

Dataset dataset_of(const std::vector<Pair>& pairs, const Model& model, const std::string& source) {
  Dataset data;
  data.source = source;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Example e;
    e.line = i + 1;
    e.source = pairs[i].source;
    e.target = pairs[i].target;
    for (const std::string& t : pairs[i].labels) e.labels.push_back(*model.vocab.find(t));
    if (!model.has_target()) {
      e.source = pairs[i].target;
      e.target.clear();
    }
    data.max_source = std::max(data.max_source, e.source.size());
    data.max_target = std::max(data.max_target, e.target.size());
    data.examples.push_back(std::move(e));
  }
  return data;
}

// A sequence-to-sequence pair from a source and the output it should give.
Pair seq2seq(const Tokens& source, const Tokens& output) {
  Pair p;
  p.source = source;
  p.target = {Vocabulary::kBegin};
  p.target.insert(p.target.end(), output.begin(), output.end());
  p.labels = output;
  p.labels.push_back(Vocabulary::kEnd);
  return p;
}

std::string joined(const Tokens& t) {
  std::string out;
  for (const auto& s : t) out += (out.empty() ? "" : " ") + s;
  return out;
}

// `count` distinct random sequences of digits 0..digits-1, lengths min_len..max_len, the
// first `held_out` of them set aside; drawn from np.random.seed(seed) as
// randint(min_len, max_len + 1) for the length, then randint(0, digits) per digit (NumPy's
// legacy randint draws masked 32-bit words, as permutation does: attn uses its own
// interval draw here, documented in docs/training.md).
std::vector<Tokens> digit_sequences(NumpyRandom& rng, std::size_t count, std::size_t digits, std::size_t min_len,
                                    std::size_t max_len) {
  std::set<Tokens> seen;
  std::vector<Tokens> out;
  const auto below = [&](std::size_t n) {  // uniform in 0..n-1
    return static_cast<std::size_t>(rng.random_sample() * static_cast<double>(n));
  };
  while (out.size() < count) {
    const std::size_t len = min_len + below(max_len - min_len + 1);
    Tokens t;
    for (std::size_t i = 0; i < len; ++i) t.push_back(std::to_string(below(digits)));
    if (seen.insert(t).second) out.push_back(t);
  }
  return out;
}

Tokens digit_vocab(std::size_t digits, const Tokens& extra = {}) {
  Tokens v = {Vocabulary::kPad, Vocabulary::kUnknown, Vocabulary::kBegin, Vocabulary::kEnd};
  v.insert(v.end(), extra.begin(), extra.end());
  for (std::size_t d = 0; d < digits; ++d) v.push_back(std::to_string(d));
  return v;
}

std::string sizes_text(const Sizes& s) {
  return fmt::format("d_model {}, {} heads, d_ff {}, {} layer{}{}", s.d_model, s.heads, s.d_ff, s.layers,
                     s.layers == 1 ? "" : "s", s.decoder_only ? "" : " each");
}

TrainingTask finish(const std::string& name, std::string description, const Tokens& vocab, Sizes sizes,
                    const std::vector<Pair>& train, const std::vector<Pair>& held_out, TrainOptions options,
                    std::uint32_t seed, const TaskSizes& asked) {
  // the sizes asked for on the command line replace the task's
  const std::string own = sizes_text(sizes);
  if (asked.d_model) sizes.d_model = asked.d_model;
  if (asked.heads) sizes.heads = asked.heads;
  if (asked.d_ff) sizes.d_ff = asked.d_ff;
  if (asked.layers) sizes.layers = asked.layers;
  if (sizes.d_model % sizes.heads != 0)
    throw InputError("attn train", "--heads",
                     fmt::format("expected a divisor of d_model = {}, found {}", sizes.d_model, sizes.heads));
  const auto at = description.find(own);
  if (at != std::string::npos) description.replace(at, own.size(), sizes_text(sizes));
  TrainingTask task;
  task.name = name;
  task.description = description;
  // Its weights, gradients and the optimizer's state, against --max-memory, before any is made.
  LoadOptions load;
  load.max_memory_bytes = asked.max_memory_bytes;
  load.backward = true;
  LoadedModel loaded =
      load_model_text(model_text(description, vocab, sizes, held_out.front(), seed), "task " + name, load);
  task.model = std::move(loaded.model);
  task.input = std::move(loaded.input);
  task.train = dataset_of(train, task.model, "task " + name + " (training)");
  task.held_out = dataset_of(held_out, task.model, "task " + name + " (held out)");
  task.options = options;
  return task;
}

TrainOptions adam(std::size_t steps, std::size_t batch, double lr, std::size_t warmup) {
  TrainOptions o;
  o.steps = steps;
  o.batch_size = batch;
  o.optimizer.kind = OptimizerKind::Adam;
  o.optimizer.lr = lr;
  o.optimizer.schedule = ScheduleKind::Cosine;
  o.optimizer.warmup = warmup;
  o.clip = 1.0;
  o.seed = 0;
  return o;
}

// copy and reverse: sequences of 4 to 8 digits 0-9, 3000 for training and 200 held out.
TrainingTask sequence_task(const std::string& name, bool reverse, const TaskSizes& asked) {
  NumpyRandom rng(reverse ? 2 : 1);
  std::vector<Tokens> seqs = digit_sequences(rng, 3200, 10, 4, 8);
  std::vector<Pair> train, held_out;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    Tokens out = seqs[i];
    if (reverse) std::reverse(out.begin(), out.end());
    (i < 200 ? held_out : train).push_back(seq2seq(seqs[i], out));
  }
  const std::string description = fmt::format(
      "Task {}: {} a sequence of 4 to 8 digits (3000 training sequences, 200 held out, never seen in "
      "training), an encoder-decoder of d_model 16, 2 heads, d_ff 64, 1 layer each",
      name, reverse ? "reverse" : "copy");
  return finish(name, description, digit_vocab(10), Sizes{16, 2, 64, 1, false, ""}, train, held_out,
                adam(2500, 32, 3e-3, 100), 0, asked);
}

// sort: 6 digits 0-2 (minGPT's demo), decoder-only: "<BOS> 2 0 1 1 0 2 = 0 0 1 1 2 2"
// with labels on the sorted half and <EOS> after it, so that generation stops there.
// 729 sequences: 600 train, 129 held out.
TrainingTask sort_task(const TaskSizes& asked) {
  std::vector<Tokens> all;
  for (std::size_t code = 0; code < 729; ++code) {
    Tokens t;
    for (std::size_t i = 0, c = code; i < 6; ++i, c /= 3) t.push_back(std::to_string(c % 3));
    all.push_back(t);
  }
  NumpyRandom rng(3);
  const std::vector<std::size_t> order = rng.permutation(all.size());
  std::vector<Pair> train, held_out;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Tokens& digits = all[order[k]];
    Tokens sorted = digits;
    std::sort(sorted.begin(), sorted.end());
    Pair p;
    p.target = {Vocabulary::kBegin};
    p.target.insert(p.target.end(), digits.begin(), digits.end());
    p.target.push_back("=");
    p.target.insert(p.target.end(), sorted.begin(), sorted.end());
    // position t predicts token t+1; only the sorted half is learned, then <EOS> (read at the
    // last sorted digit, position 13)
    p.labels.assign(p.target.size(), Vocabulary::kPad);
    for (std::size_t i = 0; i < 6; ++i) p.labels[7 + i] = sorted[i];
    p.labels[13] = Vocabulary::kEnd;
    (k < 129 ? held_out : train).push_back(p);
  }
  const std::string description =
      "Task sort: sort 6 digits 0-2, decoder-only (GPT-style: causal self-attention, no encoder) reading "
      "\"<BOS> digits = sorted\" and learning the sorted half then <EOS> (600 training sequences of the 729, "
      "129 held out), d_model 16, 2 heads, d_ff 64, 2 layers";
  Sizes sizes{16, 2, 64, 2, true, "<BOS> {} ="};  // attn generate --example sort "2 0 1 1 0 2"
  return finish("sort", description, digit_vocab(3, {"="}), sizes, train, held_out, adam(2500, 32, 3e-3, 100), 0,
                asked);
}

// --- translate: a small English-French grammar ------------------------------------------------

struct Subject {
  std::string en, fr, fr_elided;  // fr_elided before a vowel ("J'"), or fr
  int person;                     // index into a verb's forms
};
struct Verb {
  std::string en_base, en_third;  // love, loves
  std::vector<std::string> fr;    // je, tu, il/elle, nous, ils
  bool vowel;                     // elision of Je
};
struct Noun {
  std::string en, fr;
  bool feminine, vowel;
};
struct Adjective {
  std::string en, fr_masculine, fr_feminine;
};

const std::vector<Subject>& subjects() {
  static const std::vector<Subject> s = {{"I", "Je", "J'", 0},      {"you", "Tu", "Tu", 1},
                                         {"he", "Il", "Il", 2},     {"she", "Elle", "Elle", 2},
                                         {"we", "Nous", "Nous", 3}, {"they", "Ils", "Ils", 4}};
  return s;
}
const std::vector<Verb>& verbs() {
  static const std::vector<Verb> v = {
      {"love", "loves", {"aime", "aimes", "aime", "aimons", "aiment"}, true},
      {"see", "sees", {"vois", "vois", "voit", "voyons", "voient"}, false},
      {"eat", "eats", {"mange", "manges", "mange", "mangeons", "mangent"}, false},
      {"want", "wants", {"veux", "veux", "veut", "voulons", "veulent"}, false},
      {"have", "has", {"ai", "as", "a", "avons", "ont"}, true},
  };
  return v;
}
const std::vector<Noun>& nouns() {
  static const std::vector<Noun> n = {
      {"cat", "chat", false, false},     {"dog", "chien", false, false},  {"apple", "pomme", true, false},
      {"house", "maison", true, false},  {"book", "livre", false, false}, {"car", "voiture", true, false},
      {"bread", "pain", false, false},   {"water", "eau", true, true},    {"tree", "arbre", false, true},
      {"music", "musique", true, false},
  };
  return n;
}
const std::vector<Adjective>& adjectives() {
  static const std::vector<Adjective> a = {
      {"red", "rouge", "rouge"}, {"black", "noir", "noire"}, {"green", "vert", "verte"}};
  return a;
}

// Every sentence of the grammar: subject verb object, the object "AI", or the/a [colour]
// noun; French puts the colour after the noun, agrees it with the noun's gender, elides
// "Je" and "le"/"la" before a vowel.
std::vector<Pair> translation_pairs() {
  std::vector<Pair> pairs;
  for (const Subject& s : subjects()) {
    for (const Verb& v : verbs()) {
      const std::string en_verb = s.person == 2 ? v.en_third : v.en_base;
      const std::string fr_subject = v.vowel ? s.fr_elided : s.fr;
      const std::string fr_verb = v.fr[static_cast<std::size_t>(s.person)];
      // the object AI
      pairs.push_back(seq2seq({s.en, en_verb, "AI"}, {fr_subject, fr_verb, "l'", "IA"}));
      for (const Noun& n : nouns()) {
        for (int article = 0; article < 2; ++article) {
          for (int colour = -1; colour < static_cast<int>(adjectives().size()); ++colour) {
            const bool definite = article == 0;
            // English: the/a/an [colour] noun
            std::string en_article = definite ? "the" : "a";
            Tokens en = {s.en, en_verb};
            const std::string first_word = colour >= 0 ? adjectives()[static_cast<std::size_t>(colour)].en : n.en;
            if (!definite && std::string("aeiou").find(first_word[0]) != std::string::npos) en_article = "an";
            en.push_back(en_article);
            if (colour >= 0) en.push_back(adjectives()[static_cast<std::size_t>(colour)].en);
            en.push_back(n.en);
            // French: article noun [colour]
            std::string fr_article =
                definite ? (n.vowel ? "l'" : (n.feminine ? "la" : "le")) : (n.feminine ? "une" : "un");
            Tokens fr = {fr_subject, fr_verb, fr_article, n.fr};
            if (colour >= 0) {
              const Adjective& a = adjectives()[static_cast<std::size_t>(colour)];
              fr.push_back(n.feminine ? a.fr_feminine : a.fr_masculine);
            }
            pairs.push_back(seq2seq(en, fr));
          }
        }
      }
    }
  }
  return pairs;
}

Tokens translation_vocab(const std::vector<Pair>& pairs) {
  // "I love AI" -> "J' aime l' IA" first, in the order the default lesson's vocabulary has them
  Tokens v = {Vocabulary::kPad,
              Vocabulary::kUnknown,
              Vocabulary::kBegin,
              Vocabulary::kEnd,
              "I",
              "love",
              "AI",
              "J'",
              "aime",
              "l'",
              "IA"};
  std::set<std::string> have(v.begin(), v.end());
  for (const Pair& p : pairs)
    for (const Tokens* list : {&p.source, &p.labels})
      for (const std::string& t : *list)
        if (have.insert(t).second) v.push_back(t);
  return v;
}

// translate: the grammar's 2430 sentences, "I love AI" and 299 others held out (never seen in
// training), 2130 for training.
TrainingTask translate_task(const TaskSizes& asked) {
  const std::vector<Pair> all = translation_pairs();
  NumpyRandom rng(4);
  const std::vector<std::size_t> order = rng.permutation(all.size());
  std::vector<Pair> train, held_out;
  for (const Pair& p : all)
    if (joined(p.source) == "I love AI") held_out.push_back(p);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Pair& p = all[order[k]];
    if (joined(p.source) == "I love AI") continue;
    (held_out.size() < 300 ? held_out : train).push_back(p);
  }
  const std::string description = fmt::format(
      "Task translate: English to French from a small grammar (6 subjects, 5 verbs agreeing with them, the/a and an "
      "optional colour agreeing with 10 nouns, or AI; docs/training.md), {} training pairs and {} held out (\"I love "
      "AI\" among them, never seen in training), an encoder-decoder of d_model 6, 2 heads, d_ff 24, 1 layer each",
      train.size(), held_out.size());
  return finish("translate", description, translation_vocab(all), Sizes{6, 2, 24, 1, false, ""}, train, held_out,
                adam(6000, 32, 3e-3, 100), 0, asked);
}

// --- induction: a segment of random tokens seen twice -----------------------------------------

// `count` distinct tokens of `letters`, in random order (a partial Fisher-Yates shuffle drawn
// as digit_sequences draws), so that every token of a segment occurs once in it.
Tokens distinct_tokens(NumpyRandom& rng, const Tokens& letters, std::size_t count) {
  Tokens pool = letters;
  for (std::size_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<std::size_t>(rng.random_sample() * static_cast<double>(pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
  pool.resize(count);
  return pool;
}

// Filler of `count` random tokens of `letters`, none of them in `segment`: every token of the
// second copy then occurred exactly once before, in the first.
Tokens filler(NumpyRandom& rng, const Tokens& letters, const Tokens& segment, std::size_t count) {
  Tokens others;
  for (const std::string& t : letters)
    if (std::find(segment.begin(), segment.end(), t) == segment.end()) others.push_back(t);
  Tokens out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(others[static_cast<std::size_t>(rng.random_sample() * static_cast<double>(others.size()))]);
  return out;
}

// "<BOS> before segment between segment", learning only the second copy's tokens after its
// first (the ones an earlier occurrence predicts): position t's label is token t+1 there,
// <PAD> elsewhere.
Pair repeated_segment(const Tokens& before, const Tokens& segment, const Tokens& between) {
  Pair p;
  p.target = {"<BOS>"};
  for (const Tokens* part : {&before, &segment, &between, &segment})
    p.target.insert(p.target.end(), part->begin(), part->end());
  p.labels.assign(p.target.size(), "<PAD>");
  const std::size_t second = p.target.size() - segment.size();
  for (std::size_t i = 1; i < segment.size(); ++i) p.labels[second + i - 1] = segment[i];
  return p;
}

constexpr std::size_t kInductionLetters = 26, kInductionFiller = 6, kInductionTrain = 20000;

// induction: 26 tokens a-z; a segment of 4 to 12 distinct tokens seen twice, 0 to 6 random
// tokens before and between, so that only the earlier occurrence of a token tells what comes
// next. Held out: 200 segments of 6 to 12 as "<BOS> x1..xL x1..xL", never a training segment.
TrainingTask induction_task(const TaskSizes& asked) {
  Tokens letters;
  for (std::size_t i = 0; i < kInductionLetters; ++i) letters.push_back(std::string(1, static_cast<char>('a' + i)));
  NumpyRandom rng(5);
  const auto below = [&](std::size_t n) {
    return static_cast<std::size_t>(rng.random_sample() * static_cast<double>(n));
  };
  std::set<Tokens> held_segments;
  std::vector<Pair> train, held_out;
  while (held_out.size() < 200) {
    Tokens segment = distinct_tokens(rng, letters, 6 + below(7));
    if (held_segments.insert(segment).second) held_out.push_back(repeated_segment({}, segment, {}));
  }
  while (train.size() < kInductionTrain) {
    const Tokens segment = distinct_tokens(rng, letters, 4 + below(9));
    if (held_segments.count(segment)) continue;
    const Tokens before = filler(rng, letters, segment, below(kInductionFiller + 1));
    const Tokens between = filler(rng, letters, segment, below(kInductionFiller + 1));
    train.push_back(repeated_segment(before, segment, between));
  }
  const std::string description = fmt::format(
      "Task induction: continue a repeated segment of random tokens (Olsson et al.'s induction heads): \"<BOS> "
      "[filler] x1..xL [filler] x1..xL\" of {} tokens a-z, L 4 to 12 distinct, 0 to {} random others before and "
      "between, learning x2..xL of the second copy ({} training sequences, 200 held out as \"<BOS> x1..xL x1..xL\", "
      "L 6 to 12, never a training segment), decoder-only with RoPE, d_model 32, 2 heads, d_ff 64, 2 layers",
      kInductionLetters, kInductionFiller, kInductionTrain);
  Sizes sizes{32, 2, 64, 2, true, "", "rope"};
  return finish("induction", description, digit_vocab(0, letters), sizes, train, held_out, adam(1500, 32, 3e-3, 100), 0,
                asked);
}

}  // namespace

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = {"copy", "reverse", "sort", "translate", "induction"};
  return names;
}

TrainingTask make_task(const std::string& name, const TaskSizes& sizes) {
  if (name == "copy") return sequence_task("copy", false, sizes);
  if (name == "reverse") return sequence_task("reverse", true, sizes);
  if (name == "sort") return sort_task(sizes);
  if (name == "translate") return translate_task(sizes);
  if (name == "induction") return induction_task(sizes);
  throw InputError("attn train", "--task",
                   fmt::format("expected one of copy, reverse, sort, translate, induction, found \"{}\"", name));
}

}  // namespace attn
