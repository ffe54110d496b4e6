#!/usr/bin/env python3
"""Compares two PTX files kernel by kernel, ignoring what does not change the code: .loc/.file
lines, .b8 data, virtual register numbers and numbered labels. Prints each entry's count of
differing lines (0: identical code).

  # the pre-pass kernels of a commit (worktree /tmp/base) against the working tree:
  for d in /tmp/base .; do (cd $d && /usr/local/cuda/bin/nvcc -std=c++17 -O3 \
      -gencode=arch=compute_90a,code=compute_90a --expt-relaxed-constexpr -I. -ptx \
      gemm/sm90_nvfp4_grouped_gemm_prepass.cu -o /tmp/$(basename $d).ptx); done
  tools/ptx_diff.py /tmp/base.ptx /tmp/..ptx
"""
import difflib
import re
import sys


def kernels(path):
    text = open(path).read()
    out = {}
    for part in re.split(r'(?=\.visible \.entry|\.entry )', text)[1:]:
        m = re.search(r'entry (\S+)\(', part)
        if not m:
            continue
        lines = [l for l in part.splitlines()
                 if not re.match(r'\s*\.(loc|file)', l) and '.b8' not in l]
        lines = [re.sub(r'%(r|rd|p|f|h|hh|rs)[0-9]+', r'%\1N', l) for l in lines]
        lines = [re.sub(r'\b([A-Z][A-Z_]*)_[0-9]+\b', r'\1_N', l) for l in lines]
        lines = [re.sub(r'\$L__BB[0-9_]+', r'$L__BB', l) for l in lines]
        out[m.group(1)] = lines
    return out


def main():
    a, b = kernels(sys.argv[1]), kernels(sys.argv[2])
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"only in {'second' if name in b else 'first'}: {name}")
            continue
        diff = [l for l in difflib.unified_diff(a[name], b[name], lineterm='', n=0)
                if not l.startswith(('---', '+++', '@@'))]
        print(f"{len(diff):6d}  {name}")


if __name__ == '__main__':
    main()
