# Eight threads build lists, dicts and strings, then the main thread joins
# them and prints a result that does not depend on the scheduling.
import hashlib
import threading

N_THREADS = 8
ROUNDS = 400

results = [None] * N_THREADS


def work(idx):
    table = {}
    chunks = []
    for r in range(ROUNDS):
        key = "t%d-r%d" % (idx, r)
        row = [r * idx + k for k in range(r % 200 + 1)]
        table[key] = {"sum": sum(row), "row": row, "text": key * (r % 7 + 1)}
        chunks.append(bytes(r % 256 for _ in range(r % 300)))
        if r % 10 == 9:
            # drop some entries again so memory is freed while others allocate
            del table["t%d-r%d" % (idx, r - 5)]
    total = sum(v["sum"] for v in table.values())
    text = "".join(sorted(v["text"] for v in table.values()))
    digest = hashlib.sha256(text.encode() + b"".join(chunks)).hexdigest()
    results[idx] = (idx, len(table), total, digest[:16])


threads = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for res in results:
    print("thread %d: %d keys, total %d, digest %s" % res)
print("all", len(results), "threads done")
