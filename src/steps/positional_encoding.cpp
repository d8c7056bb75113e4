#include "steps/positional_encoding.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/require.h"
#include "core/shape_only.h"

namespace attn {

Tensor sinusoidal_positions(std::size_t seq_len, std::size_t d_model) {
  // seq_len S, d_model N -> (S,N)
  if (shapes_only()) return shape_only({seq_len, d_model}, {"S", "N"});
  Tensor pe({seq_len, d_model}, {"S", "N"});
  for (std::size_t pos = 0; pos < seq_len; ++pos)
    for (std::size_t i = 0; i < d_model; i += 2) {
      // The same expression as NumPy's pos / 10000 ** (i / d_model), so values match it.
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / static_cast<double>(d_model));
      pe.data[pos * d_model + i] = std::sin(angle);
      if (i + 1 < d_model) pe.data[pos * d_model + i + 1] = std::cos(angle);
    }
  return pe;
}

Tensor sinusoidal_table(std::size_t rows, std::size_t d_model) {
  // rows P, d_model N -> (P,N)
  Tensor table({rows, d_model}, {"S", "N"});
  const std::size_t sines = (d_model + 1) / 2;  // the module's sentinel: ⌈N/2⌉
  for (std::size_t pos = 0; pos < rows; ++pos)
    for (std::size_t j = 0; j < d_model; ++j) {
      // column j holds pair k's sine (j < sentinel) or cosine; NumPy's
      // pos / np.power(10000, 2 * (j // 2) / dim), at the even j (sines) or odd j (cosines)
      const std::size_t k = j < sines ? j : j - sines;
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * k) / static_cast<double>(d_model));
      const double value = j < sines ? std::sin(angle) : std::cos(angle);
      table.data[pos * d_model + j] = static_cast<double>(static_cast<float>(value));  // torch.FloatTensor
    }
  return table;
}

Tensor learned_positions(const Tensor& table, std::size_t seq_len) {
  // table is (max_len,N) -> (S,N)
  require(table.rank() == 2 && seq_len <= table.shape[0], "learned_positions: sequence longer than the table");
  if (shapes_only()) return shape_only({seq_len, table.shape[1]}, {"S", "N"});
  Tensor out({seq_len, table.shape[1]}, {"S", "N"});
  std::copy(table.data.begin(), table.data.begin() + static_cast<std::ptrdiff_t>(out.size()), out.data.begin());
  return out;
}

void learned_positions_backward(const Tensor& dpositions, Tensor& dtable) {
  // dpositions is (S,N), dtable is (max_len,N)
  require(dpositions.rank() == 2 && dtable.rank() == 2 && dpositions.shape[0] <= dtable.shape[0] &&
              dpositions.shape[1] == dtable.shape[1],
          "learned_positions_backward: dpositions (S,N), dtable (max_len,N)");
  for (std::size_t i = 0; i < dpositions.size(); ++i) dtable.data[i] += dpositions.data[i];
}

Tensor add_positions(const Tensor& x, const Tensor& positions) {
  // x is (B,S,N), positions is (S,N) -> (B,S,N)
  require(
      x.rank() == 3 && positions.rank() == 2 && positions.shape[0] == x.shape[1] && positions.shape[1] == x.shape[2],
      "add_positions: x (B,S,N), positions (S,N)");
  if (shapes_only()) return shape_only(x.shape, x.axes);
  Tensor out = x;
  const std::size_t block = positions.size();
  for (std::size_t b = 0; b < x.shape[0]; ++b)
    for (std::size_t i = 0; i < block; ++i) out.data[b * block + i] += positions.data[i];
  return out;
}

Tensor add_positions_backward(const Tensor& dy) {
  // dy is (B,S,N) -> (S,N), summed over the batch in order of b
  require(dy.rank() == 3, "add_positions_backward: dy must be (B,S,N)");
  Tensor out({dy.shape[1], dy.shape[2]}, {dy.axes[1], dy.axes[2]});
  const std::size_t block = out.size();
  for (std::size_t b = 0; b < dy.shape[0]; ++b)
    for (std::size_t i = 0; i < block; ++i) out.data[i] += dy.data[b * block + i];
  return out;
}

double rope_angle(std::size_t position, std::size_t pair, std::size_t d_head, double theta) {
  // p · theta^(-2i/d), written as Llama's p * (1 / theta ** (2i / d))
  const double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * pair) / static_cast<double>(d_head));
  return static_cast<double>(position) * inv_freq;
}

Tensor rope_inverse_frequencies(std::size_t d_head, double theta) {
  // -> (d/2,): theta^(-2i/d), as rope_angle computes it
  Tensor inv_freq({d_head / 2}, {"d/2"});
  for (std::size_t i = 0; i < d_head / 2; ++i)
    inv_freq.data[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(d_head));
  return inv_freq;
}

Tensor llama3_rope_frequencies(const Tensor& inv_freq, const RopeScaling& scaling) {
  // inv_freq is (d/2,) -> (d/2,), as transformers' _compute_llama3_parameters
  const double pi = std::acos(-1.0), old_context = scaling.original_max_position_embeddings;
  const double low_freq_wavelen = old_context / scaling.low_freq_factor;
  const double high_freq_wavelen = old_context / scaling.high_freq_factor;
  Tensor out = Tensor::uninitialized(inv_freq.shape, inv_freq.axes);  // every element is written below
  for (std::size_t i = 0; i < inv_freq.size(); ++i) {
    const double f = inv_freq.data[i], wavelen = 2 * pi / f;
    if (wavelen < high_freq_wavelen) {  // fast pairs: kept
      out.data[i] = f;
    } else if (wavelen > low_freq_wavelen) {  // slow pairs: divided by the factor
      out.data[i] = f / scaling.factor;
    } else {  // between: from one to the other as the wavelength grows
      const double smooth =
          (old_context / wavelen - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor);
      out.data[i] = (1 - smooth) * f / scaling.factor + smooth * f;
    }
  }
  return out;
}

Tensor rope_frequencies(std::size_t d_head, double theta, const RopeScaling& scaling) {
  const Tensor inv_freq = rope_inverse_frequencies(d_head, theta);
  return scaling.llama3 ? llama3_rope_frequencies(inv_freq, scaling) : inv_freq;
}

namespace {

// Turns every (i, i + r/2) pair of x's first r = 2 · inv_freq's numbers by sign · its
// angle, position · inv_freq[i] (+1 forward, -1 backward; row s at position first + s),
// and passes the other d - r numbers (r = d but for partial rotary).
Tensor rope_turn(const Tensor& x, const Tensor& inv_freq, double sign, std::size_t first = 0) {
  // x is (B,H,S,d), inv_freq (r/2,) -> (B,H,S,d)
  require(x.rank() == 4 && 2 * inv_freq.size() <= x.shape[3],
          "rope_rotate: x must be (B,H,S,d), inv_freq (r/2,) with r <= d");
  const std::size_t S = x.shape[2], d = x.shape[3], half = inv_freq.size();
  if (shapes_only()) return shape_only(x.shape, x.axes);
  // cos and sin of every (position, pair), computed once
  std::vector<double> cos_table(S * half), sin_table(S * half);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(first + s) * inv_freq.data[i];
      cos_table[s * half + i] = std::cos(angle);
      sin_table[s * half + i] = sign * std::sin(angle);
    }
  Tensor out = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  const std::size_t rows = x.size() / d;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t s = r % S;
    const double* in = x.data.data() + r * d;
    double* y = out.data.data() + r * d;
    for (std::size_t i = 0; i < half; ++i) {
      const double c = cos_table[s * half + i], sn = sin_table[s * half + i];
      y[i] = in[i] * c - in[i + half] * sn;
      y[i + half] = in[i + half] * c + in[i] * sn;
    }
    std::copy(in + 2 * half, in + d, y + 2 * half);  // the numbers partial rotary does not turn
  }
  return out;
}

}  // namespace

Tensor rope_rotate(const Tensor& x, double theta, std::size_t first_position) {
  // x is (B,H,S,d) -> (B,H,S,d)
  return rope_turn(x, rope_inverse_frequencies(x.shape.back(), theta), 1.0, first_position);
}

Tensor rope_rotate(const Tensor& x, const Tensor& inv_freq, std::size_t first_position) {
  // x is (B,H,S,d), inv_freq (d/2,) -> (B,H,S,d)
  return rope_turn(x, inv_freq, 1.0, first_position);
}

Tensor rope_rotate_backward(const Tensor& dy, double theta) {
  // dy is (B,H,S,d) -> dx (B,H,S,d)
  return rope_turn(dy, rope_inverse_frequencies(dy.shape.back(), theta), -1.0);
}

Tensor rope_rotate_backward(const Tensor& dy, const Tensor& inv_freq) {
  // dy is (B,H,S,d), inv_freq (d/2,) -> dx (B,H,S,d)
  return rope_turn(dy, inv_freq, -1.0);
}

}  // namespace attn
