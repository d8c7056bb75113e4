#include "model/weight_panels.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "attn/parameters.h"

namespace attn {

namespace {

// The whole pages of [from, from + bytes) in the mapped file under a matrix kept as stored,
// dropped from the process: every such matrix is a view of a read-only private mapping
// (model/hf_weights.cpp's keep_stored), whose pages come back from the file if they are read
// again (another view of the same bytes, GPT-2's fused W_q, W_k, W_v). Only a hint: nothing
// is lost if it fails.
void let_go_of_pages(const unsigned char* from, std::size_t bytes) {
  const auto first = reinterpret_cast<std::uintptr_t>(from), last = first + bytes;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (first + page - 1) / page * page, end = last / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// The same for the whole of a (rows, columns) view: its rows (or, transposed, its columns)
// `stride` numbers apart.
void let_go_of_matrix(const StoredMatrix& m, std::size_t rows, std::size_t columns) {
  const std::size_t lines = m.transposed ? columns : rows, along = m.transposed ? rows : columns;
  if (lines > 0 && along > 0) let_go_of_pages(m.bytes, stored_type_bytes(m.type) * ((lines - 1) * m.stride + along));
}

// t's matrix in panels; `head`: the embedding of a tied head, in panels of its transpose. A
// matrix read transposed (Llama's, a tied head's table) lets go of its stored rows as they
// are copied: the table and its panels are never held whole together (a Llama-1B-shaped
// run's peak was 3.04 GB against the stored weights' 2.50 GB while its 525 MB table was
// copied whole; 2.53 GB so).
void to_panels(Tensor& t, bool head) {
  const StoredMatrix& as_stored = *t.stored;
  const std::size_t rows = t.shape[0], columns = t.shape[1];
  auto panels =
      head ? std::make_shared<StoredMatrix>(as_stored.transpose().in_panels(columns, rows, let_go_of_pages).transpose())
           : std::make_shared<StoredMatrix>(as_stored.in_panels(rows, columns, let_go_of_pages));
  let_go_of_matrix(as_stored, rows, columns);
  t.stored = std::move(panels);
}

}  // namespace

void put_weights_in_panels(Model& model) {
  const bool tied_head = model.output.present && model.output.tied;
  std::vector<std::pair<Tensor*, bool>> matrices;
  for (const Parameter& p : parameters(model)) {
    Tensor& t = *p.tensor;
    if (!t.stored || t.stored->panel != 0 || t.rank() != 2) continue;
    // every matrix a product reads: not an untied table, of which a token reads one row
    const bool embedding = p.id.kind == WeightKind::Embedding;
    if (embedding && !tied_head) continue;
    matrices.emplace_back(&t, embedding);
  }
  // one matrix a thread at a time (each copy reads and writes memory in its own streams)
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < matrices.size(); ++i) to_panels(*matrices[i].first, matrices[i].second);
}

}  // namespace attn
