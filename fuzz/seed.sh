#!/usr/bin/env bash
# Fills fuzz/corpus/<target> with seeds copied from the repository's fixtures, at run time so
# that megabytes of corpus are not committed. What the fuzzer adds to a corpus folder stays
# between runs; the seeds are copied again (same names) each time.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=fuzz/corpus
mkdir -p "$corpus"/{sse_openai,sse_anthropic,import_claude_code,import_opencode,opencode_db,import_flame_json,context_xml}

# The SSE targets read their first byte as a count of chunk lengths that follow it (see
# fuzz_targets/sse_openai.rs), then the stream itself: each recorded stream is seeded whole and
# cut into small chunks.
wire=crates/flame-models/tests/models/wire
for provider in openai anthropic; do
    for file in "$wire/$provider"-*.sse; do
        name=$(basename "$file" .sse)
        { printf '\x00'; cat "$file"; } >"$corpus/sse_$provider/$name-whole"
        { printf '\x04\x01\x07\x10\x03'; cat "$file"; } >"$corpus/sse_$provider/$name-cut"
    done
done

# Claude Code sessions, subagents included, in pieces of at most 16 KiB cut at line ends, so that
# each seed runs fast and libFuzzer's input length limit covers it.
find tests/fixtures/claude-code -name '*.jsonl' | while read -r file; do
    name=$(basename "$file" .jsonl)
    split -C 16k -d -a 3 "$file" "$corpus/import_claude_code/$name-"
done

# The OpenCode fixture's storage/ files, one JSON object a line, sessions first.
storage=crates/flame-import/tests/import/fixtures/opencode/storage
for kind in session message part; do
    find "$storage/$kind" -name '*.json' | sort | xargs jq -c .
done >"$corpus/import_opencode/fixture.jsonl"

# OpenCode's database: the fixture, as OpenCode 1.2 writes it.
cp crates/flame-import/tests/import/fixtures/opencode/opencode.db "$corpus/opencode_db/fixture.db"

# Flame exports: the sample tree every new data directory starts with.
cp crates/flame-api/src/sample_tree.json "$corpus/import_flame_json/sample_tree.json"
