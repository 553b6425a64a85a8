#!/usr/bin/env python
"""Generate the synthetic sample data of mmtasks (RealBench, MMDU, MMRC, MUIRBench, LLaVA-Bench, BLINK, Mantis-Eval, MMIU, MM-MT-Bench, MMMU, Video-MME, MVBench, MMMU-Pro, MIRB, MMT-Bench, LLaVA-Interleave formats).

    python scripts/make_sample_data.py [OUT_DIR]     # default: data/sample

Writes OUT_DIR/realbench/, OUT_DIR/mmdu/ and OUT_DIR/mmrc/ in the local data
formats of the benchmark specs, and OUT_DIR/muirbench/, OUT_DIR/llava_bench_wild/,
OUT_DIR/blink/, OUT_DIR/mantis_eval/, OUT_DIR/mmiu/, OUT_DIR/mm_mt_bench/ and OUT_DIR/mmmu/ in their Hugging Face
schemas (a local JSONL copy and a Hub-style parquet folder under hf/; writing
the parquet needs the `datasets` package). Everything is drawn with Pillow from fixed seeds: rerunning it writes
byte-identical files (with the same Pillow build). Existing files in those
folders are replaced; nothing else is touched.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sample_data import blink, llava_bench_wild, llava_interleave, mantis_eval, mm_mt_bench, mirb, mmdu, mmiu, mmmu, mmmu_pro, mmrc, mmt_bench_mi, muirbench, mvbench, realbench, videomme  # noqa: E402

GENERATORS = {"realbench": realbench.generate, "mmdu": mmdu.generate, "mmrc": mmrc.generate,
              "muirbench": muirbench.generate, "llava_bench_wild": llava_bench_wild.generate,
              "blink": blink.generate, "mantis_eval": mantis_eval.generate, "mmiu": mmiu.generate,
              "mm_mt_bench": mm_mt_bench.generate, "mmmu": mmmu.generate,
              "videomme": videomme.generate, "mvbench": mvbench.generate,
              "mmmu_pro": mmmu_pro.generate, "mirb": mirb.generate,
              "mmt_bench_mi": mmt_bench_mi.generate,
              "llava_interleave": llava_interleave.generate}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="data/sample", type=Path,
                        help="output folder (default: data/sample)")
    args = parser.parse_args(argv)
    for name, generate in GENERATORS.items():
        target = args.out_dir / name
        if target.exists():
            shutil.rmtree(target)  # stale images of removed records must not linger
        generate(target)
        files = [p for p in target.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"{target}: {len(files)} files, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
