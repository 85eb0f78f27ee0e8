#!/usr/bin/env python3
"""Extracts the PTX of every gpu.binary in an MLIR file (gpu-module-to-binary
{format=isa}) and assembles each with ptxas for an architecture.

usage: check_ptx.py MODULE.mlir PTXAS ARCH [--print-ptx]
Prints one line per module (name, .entry count, .extern count, global
loads and stores that are vector / scalar instructions), with
--print-ptx its PTX after it, and "assembled N kernels for ARCH" (N: the
.entry directives of all modules); exits 1 if ptxas rejects one.
"""
import re
import subprocess
import sys
import tempfile


def main():
    path, ptxas, arch = sys.argv[1:4]
    print_ptx = sys.argv[4:] == ["--print-ptx"]
    text = open(path).read()
    binaries = re.findall(r'gpu\.binary @(\w+)\s*\[.*?assembly = "((?:[^"\\]|\\.)*)"', text, re.S)
    if not binaries:
        print("no gpu.binary with PTX found")
        return 1
    kernels = 0
    for name, escaped in binaries:
        ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), escaped)
        ptx = ptx.replace('\\"', '"').replace("\\\\", "\\")
        target = re.search(r"\.target (\S+)", ptx).group(1)
        kernels += ptx.count(".entry")
        # Global loads and stores, vector ones (ld.global.v4.b32) apart.
        access = re.findall(r"\b(?:ld|st)\.global(?:\.nc)?(\.v[248])?\.", ptx)
        vector = sum(1 for v in access if v)
        print(f"{name}: {ptx.count('.entry')} entry, {ptx.count('.extern')} extern, "
              f"target {target}, {vector} vector and {len(access) - vector} "
              f"scalar global accesses")
        if print_ptx:
            print(ptx)
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(ptx)
            f.flush()
            p = subprocess.run([ptxas, f"-arch={arch}", f.name, "-o", "/dev/null"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"ptxas rejected {name}:\n{p.stderr}")
                return 1
    print(f"assembled {kernels} kernels for {arch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
