#!/bin/bash
# Errors where they happen, through real input under Xvfb (xdotool):
#  - a truncated .tgraph opened with Ctrl+O from a window that has a graph
#    shows the same dialog as on the command line, and stays out of Recent;
#  - a node that fails (a missing heightmap file) is marked failed with its
#    message in the viewer and the inspector, its downstream node skipped;
#  - a node refused for a missing link says so in the user's terms, with
#    the JSON path only in the details, and the message goes once linked;
#  - a file path typed in the inspector applies on Enter, not per key;
#  - the viewer says "Computing…" while the selected node computes;
#  - the viewer's pin keeps a node shown while others are selected.
# Screenshots of each stage are left in the build tree.  Skips (77) when no
# X server can start or xdotool is not installed.
# Usage: gui_errors.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/errors
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
mkdir -p "$out/data"
# GTK's list of recent files, kept apart from the user's.
export XDG_DATA_HOME="$out/data"
cp "$src/tests/gui/data/failing.tgraph" "$src/tests/gui/data/unlinked.tgraph" "$out/"
head -c 300 "$out/failing.tgraph" > "$out/truncated.tgraph"

fail=0

steps=(
  "wait"
  # Ctrl+O, then the file chooser's location: typing a path opens it.
  "key ctrl+o"
  "sleep 1500"
  "type $out/truncated.tgraph"
  "sleep 300"
  "key Return"
  "sleep 1500"
  "dialog $out/open_error.png"
  "recent"
  "status"
  # The failing node, selected by a click.
  "click node:scan"
  "wait"
  "print-node scan"
  "print-node shape"
  "print-viewer"
  "screenshot $out/failed.png"
  # A path typed into the inspector: nothing applies until Enter.
  "click css:entry"
  "key ctrl+a"
  "type missing-scan.pn"
  "wait"
  "save $out/typing.tgraph"
  "key Return"
  "wait"
  "save $out/entered.tgraph"
  "status"
  # A slow node: the viewer says it is computing, then shows it.
  "click node:wet"
  "now print-viewer"
  "wait"
  "print-viewer"
  # Pin noise, click empty canvas and then another node: noise stays.
  "click node:noise"
  "wait"
  "click tip:Keep this node in the viewer while others are selected"
  "wait"
  "click graph:700,700"
  "wait"
  "print-viewer"
  "click node:shape"
  "wait"
  "print-viewer"
  "screenshot $out/pinned.png"
  "quit"
)
run_script opened "$(IFS=';'; echo "${steps[*]}")" "$out/failing.tgraph"

# The same file on the command line, into an untitled window.
run_script cmdline "wait;dialog $out/open_error_cmdline.png;recent;quit" "$out/truncated.tgraph"

steps=(
  "click node:bend"
  "wait"
  "status"
  "print-node bend"
  "print-viewer"
  "screenshot $out/unlinked.png"
  "drag out:noise.height in:bend.height"
  "wait"
  "status"
  "print-node bend"
  "print-viewer"
  "screenshot $out/linked.png"
  "quit"
)
run_script unlinked "$(IFS=';'; echo "${steps[*]}")" "$out/unlinked.tgraph"

python3 - "$out" <<'EOF' || fail=1
import json, sys
out = sys.argv[1]
def lines(name, prefix):
    return [l[len(prefix):].rstrip("\n") for l in open("%s/%s.log" % (out, name))
            if l.startswith(prefix)]
fail = []
def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fail.append(what)

d1 = lines("opened", "script: dialog: ")
d2 = lines("cmdline", "script: dialog: ")
check(len(d1) == 1 and d1[0].startswith("Could not open “truncated.tgraph” | truncated.tgraph:"),
      "Ctrl+O of a truncated file from a window with a graph shows the error (%s)" % d1)
check(d1 == d2, "the command line shows the same dialog (%s)" % d2)
recent = lines("opened", "script: recent: ") + lines("opened", "script: recent-manager: ") \
         + lines("cmdline", "script: recent: ") + lines("cmdline", "script: recent-manager: ")
check(not any("truncated" in r for r in recent), "the broken file stays out of Recent (%s)" % recent)
check(any(r.endswith("/failing.tgraph") for r in recent), "the file that opened is in Recent")
status = lines("opened", "script: status: ")
check(status[:1] == ["Could not open “truncated.tgraph”"], "the status says so too (%s)" % status[:1])

nodes = dict(l.split(": ", 1) for l in lines("opened", "script: node "))
check(nodes.get("scan", "").startswith('failed | cannot read "missing-scan.png"'),
      "the missing file fails its node, with the message (%s)" % nodes.get("scan"))
check(nodes.get("shape", "").startswith("skipped"), "the downstream node is skipped (%s)" % nodes.get("shape"))
views = lines("opened", "script: viewer: ")
insp = lines("opened", "script: inspector message: ")
check(views and views[0] == 'node scan, pinned -, picture no, message cannot read "missing-scan.png": '
      'No such file or directory', "the viewer shows the failed node's error (%s)" % views[:1])
check(insp and insp[0].startswith('cannot read "missing-scan.png"'),
      "the inspector shows it (%s)" % insp[:1])

def scan_path(f):
    return [n for n in json.load(open(f))["nodes"] if n["id"] == "scan"][0]["params"]["path"]
check(scan_path(out + "/typing.tgraph") == "missing-scan.png",
      "typing a path applies nothing yet (%s)" % scan_path(out + "/typing.tgraph"))
check(scan_path(out + "/entered.tgraph") == "missing-scan.pn", "Enter applies it")
check(len(status) > 1 and status[1] == 'scan: cannot read "missing-scan.pn": No such file or directory',
      "the status names the node and the file typed (%s)" % status[1:2])
check(len(views) == 5 and views[1].startswith("node wet, pinned -, picture no, message Computing… "),
      "while the selected node computes, the viewer says so (%s)" % views[1:2])
check(len(views) == 5 and views[2] == "node wet, pinned -, picture yes, message -",
      "then shows its output (%s)" % views[2:3])
check(len(views) == 5 and views[3].startswith("node noise, pinned noise, picture yes"),
      "the pin keeps noise in the viewer after a click on empty canvas (%s)" % views[3:4])
check(len(views) == 5 and views[4].startswith("node noise, pinned noise, picture yes"),
      "and after selecting another node (%s)" % views[4:5])

status = lines("unlinked", "script: status: ")
nodes = lines("unlinked", "script: node ")
check(status[:1] == ["Curve needs an input: connect a height to it"],
      "a missing link reads in the user's terms (%s)" % status[:1])
check(nodes and nodes[0].startswith("bend: failed | Curve needs an input: connect a height to it | ")
      and 'nodes[1] "bend".inputs.height: ' in nodes[0], "the JSON path is in the details (%s)" % nodes[:1])
check(len(status) == 2 and status[1] == "", "linking the input clears the message (%s)" % status[1:])
check(len(nodes) == 2 and nodes[1].startswith("bend: done"), "and the node computes (%s)" % nodes[1:])
sys.exit(1 if fail else 0)
EOF
exit $fail
