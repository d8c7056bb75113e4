// attn patch --html: the page holds what the terminal shows, each cell's exact normalised
// effect in its tooltip, every token escaped.
#include "html/experiment_page.h"

#include <string>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "model/examples.h"

TEST_CASE("the patch page draws each site kind's table with the exact effects", "[html][patch]") {
  const attn::LoadedModel loaded =
      attn::load_model_text(attn::find_example("trained_induction").json, "example trained_induction");
  attn::PatchResult result;
  result.metric.answer = loaded.model.vocab.find("f").value();
  result.clean = 4.0;
  result.corrupt = -1.0;
  attn::SiteStack stack;
  stack.layers = 2;
  stack.positions = 2;
  stack.heads = 2;
  stack.tokens = {"<BOS>", "a"};
  stack.corrupt_tokens = {"<BOS>", "q"};
  result.stacks = {stack};
  // m = 3.5: (3.5 - -1) / (4 - -1) = 0.9; m = -1.5: -0.1
  result.sites = {{{attn::SiteKind::Head, attn::Stack::Decoder, 1, 1}, 3.5},
                  {{attn::SiteKind::ResidPre, attn::Stack::Decoder, 0, 1}, -1.5}};
  const std::string page = attn::patch_page(loaded.model, result, "attn patch: <test>");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<title>attn patch: &lt;test&gt;</title>") != std::string::npos);
  CHECK(page.find("<th>&lt;BOS&gt;</th><th>a</th>") != std::string::npos);
  CHECK(page.find("title=\"layer 1, H1: 0.900000\">0.90</td>") != std::string::npos);
  CHECK(page.find("title=\"layer 0, a: -0.100000\">-0.10</td>") != std::string::npos);
  CHECK(page.find("clean run 4.000000, corrupted run -1.000000") != std::string::npos);
  CHECK(page.find("head L1 H1 0.90") != std::string::npos);
}
