#!/bin/bash
# The 2D view's layers and read-out by real input: a splat output shows its
# layers in their colours with each layer's share; picking one layer and
# the greyscale mode in the drop-downs (clicks and keys) shows that weight
# alone, grey, with its range and mean; a height reads in metres.  The
# pictures are checked pixel by pixel against the read-out.
# Skips (77) only without xdotool or an X server.
# Usage: gui_view2d.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/view2d-artifacts
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
fail=0

layer="tip:Which layer is shown: all in their colours, or one alone in the chosen mode"
mode="tip:How the output is shown"
script="select layers;wait;print-stats;screenshot2d $out/all.png;screenshot $out/all_window.png"
script="$script;click $layer;sleep 300;key Down;key Down;key Return;sleep 300;wait;print-choice $layer"
script="$script;click $mode;sleep 300;key Up;key Up;key Return;sleep 300;wait;print-choice $mode"
script="$script;print-stats;screenshot2d $out/one.png;screenshot $out/one_window.png"
script="$script;select base;wait;print-stats;screenshot $out/height_window.png;quit"
run_script view2d "$script" "$src/tests/graphs/texture.tgraph"
log="$out/view2d.log"

SRC="$src" python3 - "$out" "$log" <<'PY' || fail=1
import os, re, sys
sys.path.insert(0, os.path.join(os.environ['SRC'], 'tests', 'gui'))
from png_stats import read_png
out, log = sys.argv[1], open(sys.argv[2]).read()
stats = re.findall(r'script: stats: (.*)', log)
choices = re.findall(r'script: choice: (.*)', log)
bad = 0
def check(ok, what):
    global bad
    print(('ok: ' if ok else 'FAIL: ') + what)
    bad += not ok

def pixels(path):
    w, h, ch, rows = read_png(path)
    # The picture's pixels: opaque ones (the view around it is transparent).
    return [tuple(r[i:i + 3]) for r in rows for i in range(0, w * ch, ch)
            if ch == 3 or r[i + 3] == 255]

# 1. All layers in colour, each one's share; the shares sum to 100 %.
shares = dict((n, float(p)) for n, p in re.findall(r'■ (\w+) ([0-9.]+) %', stats[0]))
check(set(shares) == {'grass', 'rock', 'snow'} and abs(sum(shares.values()) - 100) < 0.5,
      f'the layers and their shares: {stats[0]}')
px = pixels(f'{out}/all.png')
colours = {'grass': (102, 148, 71), 'rock': (140, 135, 128), 'snow': (199, 179, 128)}
near = {n: sum(1 for p in px if max(abs(a - b) for a, b in zip(p, c)) <= 12) / len(px)
        for n, c in colours.items()}
check(all(near[n] > 0.4 * shares[n] / 100 for n in near),
      'each layer shows in its colour about as much as its share: '
      + ', '.join(f'{n} {100 * f:.1f} % of pixels' for n, f in near.items()))

# 2. One layer picked, greyscale: grey pixels whose mean is the read-out's.
check(len(choices) == 2 and choices[0] in shares and choices[1] == 'Greyscale',
      f'picked by keys: layer {choices[0] if choices else None}, mode {choices[1:]}')
m = re.match(r'min ([0-9.]+)   max ([0-9.]+)   mean ([0-9.]+)$', stats[1])
check(m is not None and abs(float(m.group(3)) * 100 - shares.get(choices[0], -1)) < 0.15,
      f'the picked layer reads its range and mean (its share): {stats[1]}')
px = pixels(f'{out}/one.png')
grey = all(p[0] == p[1] == p[2] for p in px)
mean = sum(p[0] for p in px) / len(px) / 255
check(grey and m is not None and abs(mean - float(m.group(3))) < 0.03,
      f'the picture is grey with mean {mean:.3f} (read-out {m.group(3) if m else "?"})')

# 3. A height reads in metres, within the world's height (800 m).
m = re.match(r'min ([0-9.]+) m   max ([0-9.]+) m   mean ([0-9.]+) m$', stats[2])
check(m is not None and 0 <= float(m.group(1)) < float(m.group(3)) < float(m.group(2)) <= 800,
      f'a height in metres: {stats[2]}')
sys.exit(1 if bad else 0)
PY
exit $fail
