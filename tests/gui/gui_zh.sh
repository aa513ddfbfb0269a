#!/bin/bash
# zh_CN by real input: the app under LANG=zh_CN.UTF-8 with the build's
# translations.  The node search (Tab) heads its categories in Chinese,
# one "网格" header for the mesh nodes; the engine's messages read in
# Chinese: a node whose file is missing, a file refused for a value out
# of range, one with a misspelt parameter and a truncated one (the
# dialogs, with the place kept as the file names it); a node whose file is
# no PNG and a node whose scale is below two cells (its warning).
# The locale is compiled into the build tree with localedef (glibc's
# zh_CN source); skips (77) with the reason when that or Xvfb/xdotool is
# missing.
# Usage: gui_zh.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
build=${TG_BUILD_ROOT:-.}
out=$build/tests/gui/zh-artifacts
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
command -v localedef > /dev/null || { echo "SKIP: no localedef to make the zh_CN.UTF-8 locale"; exit 77; }
mkdir -p "$out/locale"
if ! localedef -i zh_CN -f UTF-8 "$out/locale/zh_CN.UTF-8" > "$out/localedef.log" 2>&1 \
   && [ ! -d "$out/locale/zh_CN.UTF-8" ]; then
  echo "SKIP: localedef cannot make zh_CN.UTF-8 (no glibc locale sources)"; exit 77
fi
[ -f "$build/po/zh_CN/LC_MESSAGES/terrane.mo" ] || { echo "FAIL: no $build/po/zh_CN/LC_MESSAGES/terrane.mo"; exit 1; }
export LOCPATH="$out/locale" LANG=zh_CN.UTF-8 LC_ALL=zh_CN.UTF-8 LANGUAGE=zh_CN
export TERRANE_LOCALEDIR="$build/po"
fail=0

cp "$src/tests/gui/data/failing.tgraph" "$src/tests/cli/data/bad_range.tgraph" \
   "$src/tests/gui/data/zh_nodes.tgraph" "$out/"
script="wait;click node:scan;wait;print-node scan;print-viewer;screenshot $out/failed.png"
script="$script;click graph:700,700;key Tab;sleep 600;print-labels category-header"
script="$script;screenshot-popover $out/search.png;key Escape;quit"
run_script failing "$script" "$out/failing.tgraph"
run_script range "sleep 800;dialog $out/range.png;quit" "$out/bad_range.tgraph"
head -c 300 "$out/failing.tgraph" > "$out/truncated.tgraph"
echo "not a picture" > "$out/notes.png"
run_script nodes "wait;print-node scan;print-node noise;click node:scan;wait;screenshot $out/nodes.png;quit" \
  "$out/zh_nodes.tgraph"
sed 's/"octaves": 40/"octavs": 4/' "$out/bad_range.tgraph" > "$out/typo.tgraph"
run_script typo "sleep 800;dialog $out/typo.png;quit" "$out/typo.tgraph"
run_script truncated "sleep 800;dialog $out/truncated.png;quit" "$out/truncated.tgraph"

python3 - "$out" <<'PY' || fail=1
import re, sys
out = sys.argv[1]
log = open(f'{out}/failing.log').read()
bad = 0
def check(ok, what):
    global bad
    print(('ok: ' if ok else 'FAIL: ') + what)
    bad += not ok
headers = re.findall(r'script: label: (.*)', log)
want = ['输入', '生成器', '滤镜', '数学', '选择器', '侵蚀', '纹理', '散布', '场', '网格', '输出']
check(headers[:len(want)] == want or (set(want) <= set(headers)),
      'the node search heads its categories in Chinese: ' + ' '.join(headers))
check(headers.count('网格') == 1 and not any(re.search('[A-Za-z]', h) for h in headers),
      'one mesh header, none in English')
node = re.search(r'script: node scan: (.*)', log)
check(node is not None and node.group(1).startswith('failed | 无法读取“missing-scan.png”：'),
      'the engine\'s message on the failing node is Chinese: ' + (node.group(1) if node else '?'))
view = re.search(r'script: viewer: (.*)', log)
check(view is not None and '无法读取“missing-scan.png”' in view.group(1),
      'and in the viewer: ' + (view.group(1) if view else '?'))
dlg = re.search(r'script: dialog: (.*)', open(f'{out}/range.log').read())
check(dlg is not None and dlg.group(1).endswith(
      'nodes[1] "base".params.octaves: 应为 1 到 16 之间的整数，实际为 40'),
      'a value out of range in a file, in Chinese: ' + (dlg.group(1) if dlg else '?'))
dlg = re.search(r'script: dialog: (.*)', open(f'{out}/truncated.log').read())
check(dlg is not None and re.search(r'truncated.tgraph:[0-9]+:[0-9]+: 语法错误：文件意外结束$', dlg.group(1)),
      'a truncated file, in Chinese: ' + (dlg.group(1) if dlg else '?'))
log = open(f'{out}/nodes.log').read()
node = re.search(r'script: node scan: (.*)', log)
check(node is not None and re.match(r'failed \| 无法读取“notes.png”：.*notes.png 不是 PNG 文件', node.group(1)),
      'a file that is no PNG, on its node, in Chinese: ' + (node.group(1) if node else '?'))
node = re.search(r'script: node noise: (.*)', log)
check(node is not None and '2 米小于世界 8 米网格的两个网格单元：此分辨率下会丢失细节（16 米或更大才能显示）' in node.group(1),
      'a feature below two cells warns in Chinese: ' + (node.group(1) if node else '?'))
dlg = re.search(r'script: dialog: (.*)', open(f'{out}/typo.log').read())
check(dlg is not None and dlg.group(1).endswith(
      'nodes[1] "base".params.octavs: noise.fbm 的未知参数（是否想输入“octaves”？）'),
      'a misspelt parameter in a file, in Chinese: ' + (dlg.group(1) if dlg else '?'))
sys.exit(1 if bad else 0)
PY
exit $fail
