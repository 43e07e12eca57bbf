import json, sys, glob, collections
for f in sorted(glob.glob(sys.argv[1] + "/proc-*.jsonl")):
    c = collections.Counter(); inr = collections.Counter(); bad = 0; warns = []; n = 0
    for line in open(f, errors="replace"):
        n += 1
        try: r = json.loads(line)
        except Exception: bad += 1; continue
        t = r["t"]
        if t == "call":
            c[(t, r["api"], r["dom"])] += 1
            rng = r["ranges"][-1][1] if r["ranges"] else ""
            inr[(r["api"], rng)] += 1
        elif t in ("warn",): warns.append(r["msg"])
        elif t in ("proc", "end"): print(" ", t, {k: r[k] for k in r if k not in ("t",)})
        else: c[(t, r.get("kind", ""), r.get("src", ""), r.get("dst", ""))] += 1
    print(f, "lines", n, "bad", bad, "warns", warns)
    for k, v in sorted(c.items(), key=lambda kv: -kv[1])[:25]: print("   ", v, k)
    for k, v in sorted(inr.items(), key=lambda kv: -kv[1])[:12]: print("   range", v, k)
