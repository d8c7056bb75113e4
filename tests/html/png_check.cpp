// png_check FILE MIN_COLOURS MIN_INK_PERCENT: whether a screenshot shows something. Reads the
// PNG (libpng), counts its distinct colours and the share of its pixels that are not
// background (any channel below 235: text, tables, heatmap cells), prints both, and exits 1
// when either is below its minimum (a blank or all-white page), 2 when the file is not a PNG.
#include <png.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_set>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: png_check FILE MIN_COLOURS MIN_INK_PERCENT\n");
    return 2;
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, argv[1])) {
    std::fprintf(stderr, "png_check: %s: %s\n", argv[1], image.message);
    return 2;
  }
  image.format = PNG_FORMAT_RGB;
  std::vector<png_byte> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    std::fprintf(stderr, "png_check: %s: %s\n", argv[1], image.message);
    return 2;
  }
  std::unordered_set<unsigned> colours;
  std::size_t ink = 0;
  const std::size_t count = static_cast<std::size_t>(image.width) * image.height;
  for (std::size_t i = 0; i < count; ++i) {
    const png_byte* p = &pixels[3 * i];
    colours.insert(static_cast<unsigned>(p[0]) << 16 | static_cast<unsigned>(p[1]) << 8 | p[2]);
    ink += p[0] < 235 || p[1] < 235 || p[2] < 235;
  }
  const double ink_percent = count ? 100.0 * static_cast<double>(ink) / static_cast<double>(count) : 0;
  std::printf("%s: %ux%u, %zu colours, %.1f%% ink\n", argv[1], image.width, image.height, colours.size(), ink_percent);
  return colours.size() >= std::strtoul(argv[2], nullptr, 10) && ink_percent >= std::strtod(argv[3], nullptr) ? 0 : 1;
}
