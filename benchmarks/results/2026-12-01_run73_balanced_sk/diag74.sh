mkdir -p gb && tar xJf gpu_r73.tar.xz -C gb
B=gb/gpu_r73
export LD_LIBRARY_PATH=$(pwd)/$B
L=$OUT/logs; mkdir -p $L
cuobjdump -sass $B/bin/sm90_nvfp4_grouped_gemm > $L/all.sass 2>&1
ls -la $L/all.sass
python3 - "$L/all.sass" "$L" <<'PY'
import sys,re
txt=open(sys.argv[1]).read()
parts=re.split(r'\n\s*Function : ', txt)
for p in parts[1:]:
    name=p.split('\n',1)[0]
    if 'Sm90Nvfp4GroupedGemmKernel' in name and 'ILi8E' in name and 'TokenSourceE1' in name:
        sched=re.search(r'ScheduleE(\d)',name).group(1)
        open(f"{sys.argv[2]}/k8_pre_s{sched}.sass",'w').write(p)
        print(sched, len(p.split('\n')))
PY
rm $L/all.sass
for k in simple stream_k; do
ncu --clock-control none --kernel-name-base demangled --kernel-name regex:'Sm90Nvfp4GroupedGemmKernel' --launch-skip 20 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.max,smsp__cycles_active.avg \
  $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="fewtiles/decode8/$k/it" > $L/ncu_decode8_$k.txt 2>&1
done
grep -E "Duration|inst_executed|cycles_elapsed|Registers|Stack|Warp Cycles|Shared Memory Config|Dynamic Shared" $L/ncu_decode8_*.txt
tar czf $OUT/all_logs.tgz -C $L .
