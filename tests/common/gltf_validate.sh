#!/bin/bash
# gltf_validate.sh FILE.glb...: runs the Khronos glTF-Validator
# (gltf-validator@2.0.0-dev.3.10 from npm) on each file and exits 0 only
# when every file has 0 errors and 0 warnings (infos and hints are
# allowed).  The validator is installed with npm into a cache folder on
# first use (a lock keeps two builds from installing at once).  Exit 77
# when node or npm are missing, 3 when the install fails, 1 when a file
# has issues (they are printed).  Every issue is counted (maxIssues 0): a
# report cut at a limit could hide an error behind a file's many infos
# (each instancing accessor is an UNUSED_OBJECT info to the validator).
set -u

if ! command -v npm > /dev/null 2>&1 || ! command -v node > /dev/null 2>&1; then
  echo "node/npm not installed: glTF-Validator not run"
  exit 77
fi

cache="${TG_VALIDATORS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/terrane-validators}"
if ! mkdir -p "$cache" 2> /dev/null || [ ! -w "$cache" ]; then
  cache="${TG_BUILD_ROOT:-${TMPDIR:-/tmp}}/terrane-validators"
  mkdir -p "$cache" || exit 3
fi

installed () {
  node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
    "$cache/node_modules/$1/package.json" "$2" 2> /dev/null
}

if command -v flock > /dev/null 2>&1; then
  exec 9> "$cache/.lock"
  flock 9
fi
if ! installed gltf-validator 2.0.0-dev.3.10; then
  [ -f "$cache/package.json" ] || echo '{ "name": "terrane-validators", "private": true }' > "$cache/package.json"
  echo "installing gltf-validator@2.0.0-dev.3.10 into $cache"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error gltf-validator@2.0.0-dev.3.10) \
    || { echo "npm could not install gltf-validator into $cache"; exit 3; }
fi
exec 9>&-

NODE_PATH="$cache/node_modules" node - "$@" <<'JS'
const fs = require('fs'), v = require('gltf-validator');
const sev = ['ERROR', 'WARNING', 'INFO', 'HINT'];
(async () => {
  let bad = 0;
  for (const f of process.argv.slice(2)) {
    let r;
    try {
      r = await v.validateBytes(new Uint8Array(fs.readFileSync(f)), { uri: f, maxIssues: 0 });
    } catch (e) {
      console.log(`${f}: not validated: ${e}`);
      bad++;
      continue;
    }
    const i = r.issues, s = r.info || {};
    for (const m of i.messages)
      if (m.severity < 2) console.log(`  ${sev[m.severity]} ${m.code} ${m.pointer || ''}: ${m.message}`);
    console.log(`${f}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos; ` +
      `drawCalls=${s.drawCallCount} vertices=${s.totalVertexCount} triangles=${s.totalTriangleCount}`);
    if (i.numErrors > 0 || i.numWarnings > 0) bad++;
  }
  process.exit(bad ? 1 : 0);
})();
JS
