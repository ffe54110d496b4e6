"""Per-kernel SASS statistics of cuobjdump -sass outputs: instruction, R2UR, HGMMA and BRA counts
for each kernel; writes stats.txt and the stream-K kernels' SASS (xz) to the output folder.
Usage: python3 sass_stats.py A.sass B.sass OUTDIR"""
import lzma
import re
import sys

def kernels(path):
    cur, out = None, {}
    for line in open(path, errors='replace'):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        if cur and re.match(r'\s*/\*[0-9a-f]{4,6}\*/', line):
            out[cur].append(line.rstrip())
    return out

outdir = sys.argv[3]
with open(f'{outdir}/stats.txt', 'w') as st:
    for path in sys.argv[1:3]:
        ks = kernels(path)
        tag = path.rsplit('/', 1)[-1].split('.')[0]
        sk = []
        for name, lines in sorted(ks.items()):
            text = '\n'.join(lines)
            row = (f'{tag} {name[:120]} instr={len(lines)} R2UR={text.count("R2UR")} '
                   f'HGMMA={text.count("HGMMA")} BRA={text.count(" BRA")} '
                   f'LDL={text.count("LDL")} STL={text.count("STL")}')
            st.write(row + '\n')
            if 'Sm90Nvfp4GroupedGemmKernel' in name and 'ScheduleE2' in name:
                sk.append((name, text))
        with lzma.open(f'{outdir}/sk_{tag}.sass.xz', 'wt') as f:
            for name, text in sk:
                f.write(f'Function : {name}\n{text}\n')
print(open(f'{outdir}/stats.txt').read())
