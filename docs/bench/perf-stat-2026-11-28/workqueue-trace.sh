#!/bin/bash
KO=$1; OUT=$2; mkdir -p $OUT
exec > $OUT/trace.txt 2>&1
ip link set lo up
mkdir -p /run/p && mount -t tmpfs tmpfs /run/p; mkdir -p /run/p/www
head -c 1024 /dev/urandom > /run/p/www/1k.bin
insmod $KO docroot=/run/p/www port=80
httperf --server 127.0.0.1 --port 80 --uri /1k.bin --num-conns 200 --num-calls 1 > /dev/null 2>&1
T=/sys/kernel/tracing
echo 8192 > $T/buffer_size_kb
echo 1 > $T/events/workqueue/workqueue_execute_start/enable
echo 1 > $T/events/workqueue/workqueue_queue_work/enable
echo > $T/trace
httperf --server 127.0.0.1 --port 80 --uri /1k.bin --num-conns 1000 --num-calls 1 > $OUT/h.txt 2>&1
echo 0 > $T/events/workqueue/enable
grep -o "function=[^ ]*" $T/trace | sort | uniq -c | sort -rn > $OUT/funcs.txt
grep workqueue_queue_work $T/trace | head -5 >> $OUT/funcs.txt
grep workqueue_queue_work $T/trace | sed 's/.*workqueue=\([^ ]*\).*/\1/' | sort | uniq -c >> $OUT/funcs.txt
cat /proc/net/kweb | grep -E "softirq|accepted|closed" >> $OUT/funcs.txt
echo done
