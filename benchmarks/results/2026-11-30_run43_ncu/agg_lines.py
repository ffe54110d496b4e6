import csv, sys, collections, os
fn = sys.argv[1]
rows = list(csv.reader(open(fn)))
cur_file = None; hdr = None
agg = collections.defaultdict(lambda: [0, 0, 0])  # samples, not-issued, instr executed
tot = [0, 0, 0]
for r in rows:
    if not r: continue
    if r[0] == 'File Path':
        cur_file = r[1].split('execroot/encore/')[-1]; hdr = None; continue
    if r[0] == 'Function Name': continue
    if r[0] == 'Line No':
        hdr = r; continue
    if hdr is None: continue
    try:
        line = int(r[0])
    except ValueError:
        continue
    d = dict(zip(hdr, r))
    def num(k):
        v = d.get(k, '0').replace(',', '')
        try: return float(v)
        except: return 0.0
    s = num('Warp Stall Sampling (All Samples)'); ni = num('Warp Stall Sampling (Not-issued Samples)'); ie = num('Instructions Executed')
    a = agg[(cur_file, line)]
    a[0] += s; a[1] += ni; a[2] += ie
    tot[0] += s; tot[1] += ni; tot[2] += ie
print('total samples %d, instr executed %d' % (tot[0], tot[2]))
src_cache = {}
def src(f, l):
    p = os.path.join('/work/main', f)
    if p not in src_cache:
        try: src_cache[p] = open(p).read().split('\n')
        except: src_cache[p] = []
    L = src_cache[p]
    return L[l-1].strip()[:70] if 0 < l <= len(L) else '?'
key = 0 if len(sys.argv) < 3 else int(sys.argv[2])
for (f, l), a in sorted(agg.items(), key=lambda kv: -kv[1][key])[:40]:
    print('%5.1f%% samp %5.1f%% instr  %s:%d  %s' % (100*a[0]/tot[0], 100*a[2]/max(tot[2],1), f.split('/')[-1], l, src(f, l)))
