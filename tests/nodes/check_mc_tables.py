#!/usr/bin/env python3
# Runs the marching-cubes table generator and compares its output with the
# header in the tree.  Usage: check_mc_tables.py GENERATOR HEADER
import subprocess, sys, tempfile, os

gen, header = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory () as d:
    out = os.path.join (d, 'mc_tables.h')
    subprocess.run ([sys.executable, gen, out], check=True)
    if open (out).read () != open (header).read ():
        print ('%s differs from what %s writes' % (header, gen))
        sys.exit (1)
print ('ok')
