#!/usr/bin/env python3
# Summarizes an Nsight Compute source-page export (ncu -i R --page source --csv --print-source sass):
# stall samples by reason, by opcode, and the 25 instructions with the most samples.
#   python3 source_stalls.py source.csv
import csv,sys,collections
f=sys.argv[1]
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
reasons=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot=collections.Counter(); total=0
ins=[]
for r in data:
    try: s=int(r[ix['Warp Stall Sampling (All Samples)']])
    except: continue
    total+=s
    rc={h:int(r[ix[h]] or 0) for h in reasons}
    for h,v in rc.items(): tot[h]+=v
    ins.append((s,r[ix['Address']],r[ix['Source']].strip(),rc,int(r[ix['Instructions Executed']] or 0)))
print('total samples',total)
for h,v in tot.most_common(12): print('  %-22s %6d %5.1f%%'%(h,v,100*v/total))
# by opcode
op=collections.Counter(); opr=collections.defaultdict(collections.Counter)
for s,a,src,rc,ex in ins:
    o=src.split()[0] if src else '?'
    if o.startswith('@'): o=src.split()[1]
    o=o.split('.')[0]
    op[o]+=s
    for h,v in rc.items(): opr[o][h]+=v
print('by opcode:')
for o,v in op.most_common(15):
    print('  %-10s %6d %5.1f%%  %s'%(o,v,100*v/total, ', '.join('%s %d'%(h[6:],c) for h,c in opr[o].most_common(3))))
print('top instructions:')
addr_index={a:i for i,(s,a,src,rc,ex) in enumerate(ins)}
for s,a,src,rc,ex in sorted(ins,reverse=True)[:25]:
    print('  %6d %5.1f%% %-60s ex=%d %s'%(s,100*s/total,src[:60],ex,', '.join('%s %d'%(h[6:],c) for h,c in collections.Counter(rc).most_common(2))))
