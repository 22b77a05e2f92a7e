#!/usr/bin/env bash
# mkcorpus.sh BUILD: writes the seed corpora of fuzz/corpus from real runs and real
# frames (run from the repository root with a built tree; deterministic):
#   histdb: the bundled scenarios cut at 1.5 s (shrink{end_at}) at seed 1, each
#           database vacuumed to 512-byte pages (files over 64 KB left out), plus
#           trimmed copies of ten of them;
#   frame:  fuzz_seed_frame (frames a real cluster sent);
#   jsonl, jepsen, porcupine, lua: mkcorpus.py.
# Regression files (fuzz/corpus/*/regress-*) are kept as they are.
set -euo pipefail
build=${1:?build dir}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 fuzz/mkcorpus.py
mkdir -p fuzz/corpus/frame fuzz/corpus/histdb
"$build/fuzz/fuzz_seed_frame" fuzz/corpus/frame
for f in scenarios/smoke.lua scenarios/chaos.lua scenarios/seeds/*.lua; do
    b=$(basename "$f" .lua)
    { printf 'shrink{ end_at = 1500*ms, rate = 20 }; '; cat "$f"; } > "$tmp/$b.lua"
    "$build/faultline" run "$tmp/$b.lua" --seed 1 --db "$tmp/$b.db" >/dev/null 2>&1 || true
    sqlite3 "$tmp/$b.db" "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;" >/dev/null
    if [ "$(stat -c %s "$tmp/$b.db")" -le 64000 ]; then cp "$tmp/$b.db" "fuzz/corpus/histdb/$b.db"; fi
done
for b in smoke chaos compaction lease-expiry watch-leader-change defrag nospace backup-restore \
         election-fresh leader-down; do
    cp "$tmp/$b.db" "$tmp/t.db"
    sqlite3 "$tmp/t.db" "delete from ops where op_id > 6; delete from watch_events where seq > 3;
        delete from node_events where rowid > 5; delete from faults where rowid > 2; VACUUM;"
    cp "$tmp/t.db" "fuzz/corpus/histdb/$b-small.db"
done
