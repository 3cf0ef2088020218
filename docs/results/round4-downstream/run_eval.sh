#!/bin/bash
# usage: run_eval.sh SRC NAME DATASET EPSILONS DOCUMENTS
SRC=$1; NAME=$2; DATASET=$3; EPS=$4; DOCS=$5
OUT=/tmp/ds/$NAME
mkdir -p /tmp/ds/home-$NAME
cd $SRC
date -u > /tmp/ds/$NAME.start
PRIVET_HOME=/tmp/ds/home-$NAME QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 PYTHONPATH=$SRC \
  nice -n 10 /work/main/.venv/bin/python -m core.cli evaluate --downstream --dataset $DATASET --out $OUT --scale demo \
  --methods dp_synrag --members 1000 --epsilons $EPS --documents $DOCS > /tmp/ds/$NAME.log 2>&1
echo "rc=$?" >> /tmp/ds/$NAME.log
date -u > /tmp/ds/$NAME.end
