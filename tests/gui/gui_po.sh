#!/bin/bash
# zh_CN.po is well formed and translates every string in POTFILES: the
# GUI's own and the node descriptors' labels and help (the GUI translates
# those when it shows them).
set -u
src=${TG_SOURCE_ROOT:-.}
command -v xgettext > /dev/null && command -v msgmerge > /dev/null || { echo "SKIP: no gettext"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$src"
msgfmt --check -o /dev/null po/zh_CN.po || exit 1
xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=g_dngettext:2,3 -o "$tmp/all.pot" \
  $(grep -vE '^(#|$)' po/POTFILES) || exit 1
msgmerge -q --no-fuzzy-matching po/zh_CN.po "$tmp/all.pot" -o "$tmp/merged.po" || exit 1
untranslated=$(msgattrib --untranslated --no-obsolete "$tmp/merged.po" | grep -c '^msgid ' || true)
total=$(grep -c '^msgid ' "$tmp/all.pot")
echo "strings: $total, untranslated in zh_CN: $((untranslated > 0 ? untranslated - 1 : 0))"
[ "$untranslated" -le 1 ] || { msgattrib --untranslated --no-obsolete "$tmp/merged.po"; exit 1; }
# Labels the engine builds with the preprocessor ("Mask " #N) are looked up whole.
for n in 1 8; do
  grep -q "msgid \"Mask $n\"" po/zh_CN.po || { echo "FAIL: no translation of \"Mask $n\""; exit 1; }
done
