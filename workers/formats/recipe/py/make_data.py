"""Writes the recipe's episodes as JSONL from config.json (the same rows the playground wrote).

    python3 make_data.py --episodes N [--config config.json] [--out data/train.jsonl]
"""
import argparse
import json
import sys

from toyenv import dataset_rows


def js_number(x):
    """A float as JavaScript's JSON.stringify writes it, so the file matches the page's byte for byte."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    mantissa, _, exp = repr(x).partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # value = 0.<digits> x 10^n
    n = len(whole) + int(exp or 0) if whole != "0" else int(exp or 0) - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + body


def js_json(v):
    """JSON text as JSON.stringify(v) writes it (compact, JavaScript number forms)."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        return js_number(v)
    if isinstance(v, list):
        return "[" + ",".join(js_json(x) for x in v) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + js_json(x) for k, x in v.items()) + "}"


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
            f.write(js_json(r) + "\n")
    print(f"{len(rows)} episodes written to {args.out}")


if __name__ == "__main__":
    main()
