// png_check FILE MIN_COLOURS MIN_INK_PERCENT: whether a screenshot shows something. Reads the
// PNG (libpng), counts its distinct colours and the share of its pixels that are not
// background (any channel below 235: text, tables, heatmap cells), prints both, and exits 1
// when either is below its minimum (a blank or all-white page), 2 when the file is not a PNG.
// png_check FILE --where RRGGBB...: where each colour is, to compare a screenshot by its
// structure: one line per colour, "RRGGBB PIXELS MEAN_X MEAN_Y" (the pixels of exactly that
// colour and their mean column and row; -1 -1 when there are none).
#include <png.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4 || (argc > 4 && std::string(argv[2]) != "--where")) {
    std::fprintf(stderr, "usage: png_check FILE MIN_COLOURS MIN_INK_PERCENT | png_check FILE --where RRGGBB...\n");
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
  if (std::string(argv[2]) == "--where") {
    for (int a = 3; a < argc; ++a) {
      const unsigned wanted = static_cast<unsigned>(std::strtoul(argv[a], nullptr, 16));
      std::size_t n = 0;
      double x = 0, y = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(image.width) * image.height; ++i) {
        const png_byte* p = &pixels[3 * i];
        if ((static_cast<unsigned>(p[0]) << 16 | static_cast<unsigned>(p[1]) << 8 | p[2]) != wanted) continue;
        ++n;
        x += static_cast<double>(i % image.width);
        y += static_cast<double>(i / image.width);
      }
      std::printf("%s %zu %.0f %.0f\n", argv[a], n, n ? x / static_cast<double>(n) : -1.0,
                  n ? y / static_cast<double>(n) : -1.0);
    }
    return 0;
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
