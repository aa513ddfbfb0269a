#!/usr/bin/env python3
"""cli_forest_tscn.py FILE.tscn: the structure Godot 4's text scene loader
(ResourceLoaderText) relies on, checked where no Godot 4 can run (Debian
packages only Godot 3, which reads format=2 scenes, not ours):

- a [gd_scene load_steps=N format=3] header, N = resources + 1;
- every section header well formed, sub_resource ids unique, and every
  SubResource("id") defined above its use;
- the first node the root (no parent), every other node's parent the root
  (".") or the path of a node above it, sibling names unique and free of
  the characters Godot refuses (. : @ / " %);
- each MultiMesh sets transform_format = 1 before instance_count, and its
  buffer holds 12 floats per instance; each MultiMeshInstance3D names a
  MultiMesh.

Prints "ok: ..." and exits 0, or prints what is wrong and exits 1."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
bad = []
head = re.match(r"\[gd_scene load_steps=(\d+) format=3\]\n", text)
if not head:
    bad.append("no [gd_scene load_steps=N format=3] header")
sections = re.findall(r"^\[([a-z_]+)((?: [a-z_]+=(?:\"[^\"]*\"|[0-9]+))*)\]$", text, re.M)
if len(sections) != len(re.findall(r"^\[", text, re.M)):
    bad.append("%d section headers, %d well formed" % (len(re.findall(r"^\[", text, re.M)), len(sections)))
defined, nodes, children = set(), {}, {}
n_resources = 0
# Each section with its body, in file order.
parts = re.split(r"^(\[[^\n]*\])$", text, flags=re.M)
for i in range(1, len(parts), 2):
    header, body = parts[i], parts[i + 1]
    attrs = {k: a or b for k, a, b in re.findall(r' ([a-z_]+)=(?:"([^"]*)"|([0-9]+))', header)}
    for ref in re.findall(r'SubResource\("([^"]+)"\)', body):
        if ref not in defined:
            bad.append("%s uses SubResource %s before it is defined" % (header, ref))
    if header.startswith("[sub_resource") or header.startswith("[ext_resource"):
        n_resources += 1
        rid = attrs.get("id")
        if not rid or rid in defined:
            bad.append("%s: missing or repeated id" % header)
        defined.add(rid)
        if attrs.get("type") == "MultiMesh":
            tf = body.find("\ntransform_format = 1\n")
            ic = re.search(r"\ninstance_count = (\d+)\n", body)
            buf = re.search(r"\nbuffer = PackedFloat32Array\(([^)]*)\)\n", body)
            if tf < 0 or not ic or tf > ic.start():
                bad.append("%s: transform_format = 1 not before instance_count" % header)
            elif not buf or len([v for v in buf.group(1).split(",") if v.strip()]) != 12 * int(ic.group(1)):
                bad.append("%s: buffer is not 12 floats per instance" % header)
    elif header.startswith("[node"):
        name, parent = attrs.get("name", ""), attrs.get("parent")
        if not name or re.search(r'[.:@/"%]', name):
            bad.append("%s: a name Godot refuses" % header)
        if parent is None:
            if nodes:
                bad.append("%s: a second root" % header)
            path = "."
        else:
            if not nodes:
                bad.append("%s: the first node has a parent" % header)
            if parent not in nodes:
                bad.append("%s: parent %s is not a node above" % (header, parent))
            path = name if parent == "." else parent + "/" + name
            if name in children.setdefault(parent, set()):
                bad.append("%s: a sibling has that name" % header)
            children[parent].add(name)
        nodes[path] = attrs.get("type")
        if attrs.get("type") == "MultiMeshInstance3D" and not re.search(
                r'^multimesh = SubResource\("MultiMesh_[0-9]+"\)$', body, re.M):
            bad.append("%s: no MultiMesh" % header)
if head and int(head.group(1)) != n_resources + 1:
    bad.append("load_steps=%s for %d resources" % (head.group(1), n_resources))
for b in bad[:8]:
    print(b)
if not bad:
    print("ok: %s: %d resources, %d nodes, %d MultiMeshInstance3D" % (
        sys.argv[1], n_resources, len(nodes),
        sum(t == "MultiMeshInstance3D" for t in nodes.values())))
sys.exit(1 if bad else 0)
