"""Writes the recipe's episodes as JSONL from config.json (the same rows the playground wrote).

    python3 make_data.py --episodes N [--config config.json] [--out data/train.jsonl]
"""
import argparse
import json
import sys

from toyenv import dataset_rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, required=True)
    ap.add_argument("--config", default="config.json")
    ap.add_argument("--out", default="data/train.jsonl")
    args = ap.parse_args()
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    try:
        rows = dataset_rows(config, args.episodes)
    except ValueError as e:
        sys.exit(f"error: {e}")
    with open(args.out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} episodes written to {args.out}")


if __name__ == "__main__":
    main()
