#!/bin/bash
# export.splat size pow2 through the CLI: the golden texture graph at 513
# samples writes 512 x 512 maps (Unity RGBA and Unreal grey) that pngcheck
# accepts (skipped when missing), the same bytes for 1 and 2 threads, and
# a manifest stating 512 x 512 over the world's whole extent with the same
# layer in each channel as size world; a tile of a tiled build refuses it,
# naming the node and the parameter.
. "$(dirname "$0")/lib.sh"

G="$SRC/tests/graphs/texture.tgraph"
pow2=(--set unity_out.size=pow2 --set unreal_out.size=pow2 --set biome_splat_out.size=pow2)

run "$TGRAPH" eval "$G" -r 513 -o "$TMP/world" --threads 2 --quiet
expect_rc 0 "eval, size world"
run "$TGRAPH" eval "$G" -r 513 -o "$TMP/p2" --threads 2 --quiet "${pow2[@]}"
expect_rc 0 "eval, size pow2, 2 threads"
run "$TGRAPH" eval "$G" -r 513 -o "$TMP/p1" --threads 1 --quiet "${pow2[@]}"
expect_rc 0 "eval, size pow2, 1 thread"
for f in unity/splat_0.png biome/splat_0.png unreal/weight_grass.png unreal/weight_rock.png \
         unreal/weight_snow.png manifest.json; do
  expect_same "$TMP/p1/$f" "$TMP/p2/$f" "$f for 1 and 2 threads"
done

if command -v pngcheck > /dev/null 2>&1; then
  run pngcheck -q "$TMP"/p2/unity/splat_0.png "$TMP"/p2/biome/splat_0.png "$TMP"/p2/unreal/*.png
  expect_rc 0 "pngcheck of the pow2 maps"
else
  echo "SKIP: pngcheck not installed"
fi

checks=$((checks + 1))
python3 - "$TMP/world/manifest.json" "$TMP/p2/manifest.json" <<'PY' || fail "pow2 manifest (see above)"
import json, sys
world = {f["path"]: f for f in json.load(open(sys.argv[1]))["files"]}
pow2 = {f["path"]: f for f in json.load(open(sys.argv[2]))["files"]}
ok = True
for p in ("unity/splat_0.png", "biome/splat_0.png", "unreal/weight_grass.png",
          "unreal/weight_rock.png", "unreal/weight_snow.png"):
    w, q = world[p], pow2[p]
    if w["resolution"] != [513, 513] or q["resolution"] != [512, 512]:
        print(p, "resolution", w["resolution"], q["resolution"]); ok = False
    if q["extent_m"] != w["extent_m"] or q.get("channels") != w.get("channels"):
        print(p, "extent or channels", q["extent_m"], w["extent_m"], q.get("channels"),
              w.get("channels")); ok = False
# Everything else is as the world build wrote it.
for p in world:
    if "splat" not in p and "weight" not in p and world[p]["sha256"] != pow2[p]["sha256"]:
        print(p, "changed"); ok = False
sys.exit(0 if ok else 1)
PY

# One tile of a 2 x 2 build cannot hold a resampled whole-world map.
run "$TGRAPH" eval "$G" -r 513 -o "$TMP/tile" --tiles 2,2 --tile 0,0 --quiet "${pow2[@]}"
expect_rc 1 "a tile with size pow2"
expect_in "$TMP/err" "unity_out" "the refusal names the node"
expect_in "$TMP/err" "params.size" "the refusal names the parameter"
expect_in "$TMP/err" "tiled build" "the refusal says why"
expect_no_files "$TMP/tile" "a refused tile writes nothing"

finish
