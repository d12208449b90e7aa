"""JSONL episodes -> the Parquet files verl reads (data.train_files, data.val_files).

    python3 verl/prepare_data.py [--config config.json] [--train data/train.jsonl] [--val-episodes 64]

Needs pandas and pyarrow (verl's own dependencies). Parquet is written here rather than by the
page: verl's rows nest a chat prompt (a list of role/content structs) and dicts, and the chat
prompt comes from the same code that runs the environment (toyenv/text.py).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from toyenv import batch_rows  # noqa: E402
from toyenv.text import messages  # noqa: E402


def verl_row(config, row):
    return {
        "data_source": f"toyenv/{config['task']}",
        "agent_name": "tool_agent",
        "prompt": messages(config, row),
        "ability": "agent",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(row["answer"], ensure_ascii=False)},
        "extra_info": {"id": row["id"], "interaction_kwargs": {"name": "toyenv", "row": json.dumps(row, ensure_ascii=False)}},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=os.path.join(HERE, "..", "config.json"))
    ap.add_argument("--train", default=os.path.join(HERE, "..", "data", "train.jsonl"))
    ap.add_argument("--val-episodes", type=int, default=64, help="held-out episodes, drawn from batches far past the training ones")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "data"))
    args = ap.parse_args()
    # Imported here so that verl_row can be used (and checked) where pandas is not installed.
    import pandas as pd

    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    with open(args.train, encoding="utf-8") as f:
        train = [json.loads(line) for line in f if line.strip()]
    # Validation prompts come from iteration 1,000,000 on: batches no training step draws.
    val = batch_rows(config, 1_000_000, args.val_episodes)
    pd.DataFrame([verl_row(config, r) for r in train]).to_parquet(os.path.join(args.out, "train.parquet"))
    pd.DataFrame([verl_row(config, r) for r in val]).to_parquet(os.path.join(args.out, "val.parquet"))
    print(f"{len(train)} training and {len(val)} validation rows written to {args.out}")


if __name__ == "__main__":
    main()
