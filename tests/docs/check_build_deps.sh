#!/usr/bin/env bash
# README's "Building by hand" list against what the build asks for: every find_package and
# pkg_check_modules of the CMake files (this tree's, not build folders') must be provided by
# a package of the list, as scripts/install-deps reads it from README.md (the list CI
# installs). A new dependency whose package the README does not name fails here, by name.
#
#   check_build_deps.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
listed=$(bash scripts/install-deps --list) || { echo "scripts/install-deps --list failed" >&2; exit 1; }
# What CMake asks for -> the Debian package that provides it.
declare -A provider=(
  [CLI11]=libcli11-dev [Catch2]=catch2 [Eigen3]=libeigen3-dev [OpenMP]=g++ [PNG]=libpng-dev
  [PkgConfig]=pkg-config [Threads]=g++ [ZLIB]=zlib1g-dev [fmt]=libfmt-dev [nlohmann_json]=nlohmann-json3-dev
  [libpcre2-8]=libpcre2-dev [icu-uc]=libicu-dev [sentencepiece]=libsentencepiece-dev
)
files=$(git ls-files '*CMakeLists.txt' '*.cmake' 2>/dev/null || find . -path ./build -prune -o \( -name CMakeLists.txt -o -name '*.cmake' \) -print)
asked=$( (grep -hoE 'find_package\([A-Za-z0-9_]+' $files | sed 's/find_package(//'
          grep -hoE 'pkg_check_modules\([A-Z0-9_]+ [A-Z_ ]*[a-z][a-z0-9.+-]*' $files | awk '{print $NF}') | sort -u)
status=0
for name in $asked; do
  package=${provider[$name]:-}
  if [ -z "$package" ]; then
    echo "the build asks for $name: add the Debian package that provides it to README.md's list and to this map" >&2
    status=1
  elif ! grep -qxF -- "$package" <<<"$listed"; then
    echo "the build asks for $name, but README.md's \"Building by hand\" list lacks $package" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "README.md's list provides all of: $(echo $asked)"
exit $status
