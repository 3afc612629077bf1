#!/usr/bin/env python3
# Feasibility probe for issue #19 point 4, item 2 (an evaluation tool, not product code): word
# vectors by PPMI + truncated SVD from WordNet 3.0 (Debian wordnet-base), each synset one context
# (its lemmas, its definition's content words, its hypernyms' lemmas; context counts smoothed
# ^0.75; randomized SVD, 2 power iterations, seed 1919; word vector U * sqrt(S), L2-normalised).
# A text's vector is the IDF-weighted sum of its known words' vectors (suffix-stripped or
# WordNet .exc base forms), L2-normalised. Served as an OpenAI-compatible /v1/embeddings endpoint
# on 127.0.0.1 only, so the real store measures it:
#   python3 retrieval_wordnet_svd_probe.py PORT DIM [CACHE.npy]      # serve
#   python3 retrieval_wordnet_svd_probe.py PORT DIM [CACHE.npy] --pairs   # print cosines of pairs
#   python3 retrieval_wordnet_svd_probe.py PORT DIM [CACHE.npy] --added=W  # hashed words + W x SVD
# With --added=W a text's vector is [384 hashed-word features ; W x its SVD vector], L2-normalised
# (dimension 384 + DIM): the hashed words emulate the lexical embedder (each word's base form
# hashed by BLAKE2b to a signed feature, weighted by IDF), so --added=0 against --added=W measures
# what the vectors add beside word identity.
#   bulwark-lab eval retrieval ... --ranking hybrid \
#       --embedder '{"kind":"http","url":"http://127.0.0.1:PORT","model":"wn-ppmi-svd","dimension":DIM}'
# Needs python3-numpy; about 5 minutes and 2 GB to factor on a loaded 2-core machine (CACHE.npy
# keeps the vectors for the next start).
import os, re, sys, json, math, collections, numpy as np, time
from http.server import HTTPServer, BaseHTTPRequestHandler
PORT, DIM = int(sys.argv[1]), int(sys.argv[2])
CACHE = next((a for a in sys.argv[3:] if a.endswith('.npy')), None)
PAIRS = '--pairs' in sys.argv[3:]
ADDED = next((float(a.split('=', 1)[1]) for a in sys.argv[3:] if a.startswith('--added=')), None)
STOP = set("a an the and or but of to in on at for with by from is are was were be been being do does did what when where who whom which how why that this these those have has had not no can will would should could so as if than then there here about into up out over under again more most some any all each every just also very its it he she they them his her their our your my me we you i one used especially someone something etc usually make made".split())
t0 = time.time()
wid = {}; words = []
def w(x):
    if x not in wid: wid[x] = len(words); words.append(x)
    return wid[x]
rows, cols = [], []
synsets = {}  # (pos, offset) -> (ctx index, lemma word ids, hypernym keys)
ctx = 0
for pos in ['noun', 'verb', 'adj', 'adv']:
    for line in open(f'/usr/share/wordnet/data.{pos}', encoding='latin1'):
        if line.startswith('  '): continue
        head, _, gloss = line.partition('|')
        f = head.split()
        off = int(f[0]); n = int(f[3], 16)
        lem = [f[4 + 2 * i].lower() for i in range(n)]
        p = 4 + 2 * n; pc = int(f[p]); hyp = []
        for j in range(pc):
            sym, o, ps = f[p + 1 + 4 * j], int(f[p + 2 + 4 * j]), f[p + 3 + 4 * j]
            if sym in ('@', '@i'): hyp.append((ps.replace('s', 'a'), o))
        defn = gloss.split('"')[0].lower()
        own = set()
        for l in lem:
            for part in re.split(r'[_\-]', re.sub(r'\(.*\)', '', l)):
                if part.isalpha() and part not in STOP: own.add(part)
        dw = {x for x in re.findall(r'[a-z]+', defn) if x not in STOP and len(x) > 2}
        synsets[(pos[0] if pos != 'adj' else 'a', off)] = (ctx, own, dw, hyp)
        ctx += 1
for key, (c, own, dw, hyp) in synsets.items():
    ws = set(own) | dw
    for h in hyp:
        if h in synsets: ws |= synsets[h][1]
    for x in sorted(ws): rows.append(w(x)); cols.append(c)  # sorted: word ids fixed across runs
rows = np.array(rows); cols = np.array(cols); V, C = len(words), ctx
print(f'vocab {V} contexts {C} nnz {len(rows)} in {time.time()-t0:.1f}s', file=sys.stderr, flush=True)
# PPMI (context distribution smoothed ^0.75)
wc = np.bincount(rows, minlength=V).astype(np.float64); cc = np.bincount(cols, minlength=C).astype(np.float64) ** 0.75
N = len(rows)
pmi = np.log(1.0 * N / (wc[rows])) - np.log(cc[cols] / cc.sum())  # log P(w,c)/(P(w)P_a(c)) with count(w,c)=1
vals = np.maximum(pmi, 0.0)
keep = vals > 0; rows, cols, vals = rows[keep], cols[keep], vals[keep]
order = np.argsort(rows, kind='stable'); rows, cols, vals = rows[order], cols[order], vals[order]
starts = np.searchsorted(rows, np.arange(V))
def matmul(X):  # M @ X, M: V x C sparse
    prod = vals[:, None] * X[cols]
    out = np.zeros((V, X.shape[1]))
    nz = np.unique(rows)
    out[nz] = np.add.reduceat(prod, np.searchsorted(rows, nz), axis=0)
    return out
corder = np.argsort(cols, kind='stable'); crows, ccols, cvals = rows[corder], cols[corder], vals[corder]
def rmatmul(Y):  # M.T @ Y
    prod = cvals[:, None] * Y[crows]
    out = np.zeros((C, Y.shape[1]))
    nz = np.unique(ccols)
    out[nz] = np.add.reduceat(prod, np.searchsorted(ccols, nz), axis=0)
    return out
CACHED = CACHE is not None and os.path.exists(CACHE)
rng = np.random.default_rng(1919)
k = DIM + 20
if not CACHED:
    Q = rng.standard_normal((C, k))
    Y = matmul(Q)
    for _ in range(2):
        Y, _r = np.linalg.qr(Y); Y = matmul(rmatmul(Y))
    Qy, _r = np.linalg.qr(Y)
    B = rmatmul(Qy).T  # k x C
if CACHED:
    U = np.load(CACHE)
    if U.shape != (V, DIM): sys.exit('cache does not match the vocabulary and DIM')
else:
    Ub, S, _vt = np.linalg.svd(B, full_matrices=False)
    U = (Qy @ Ub)[:, :DIM] * np.sqrt(S[:DIM])
    U /= np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-9)
    if CACHE: np.save(CACHE, U)
idf = np.log(C / (1 + wc))
print(f'svd done in {time.time()-t0:.1f}s', file=sys.stderr, flush=True)
EXC = {}
for pos in ['noun', 'verb', 'adj']:
    for line in open(f'/usr/share/wordnet/{pos}.exc', encoding='latin1'):
        f = line.split()
        if len(f) >= 2: EXC.setdefault(f[0], f[1])
def lookup(x):
    if x in wid: return wid[x]
    if x in EXC and EXC[x] in wid: return wid[EXC[x]]
    for suf, rep in (('ies', 'y'), ('es', ''), ('s', ''), ('ed', ''), ('ed', 'e'), ('ing', ''), ('ing', 'e')):
        if x.endswith(suf) and x[:-len(suf)] + rep in wid: return wid[x[:-len(suf)] + rep]
    return None
HASH_DIM = 384
def hashed(text):
    import hashlib
    h = np.zeros(HASH_DIM)
    for x in re.findall(r'[a-z0-9]+', text.lower()):
        if x in STOP: continue
        i = lookup(x); base = words[i] if i is not None else x
        d = hashlib.blake2b(base.encode(), digest_size=8).digest()
        k = int.from_bytes(d[:4], 'little') % HASH_DIM; sgn = 1 if d[4] & 1 else -1
        h[k] += sgn * (idf[i] if i is not None else math.log(C))
    n = np.linalg.norm(h)
    return h / n if n else h
def embed(text):
    if ADDED is None: return embed_svd(text)
    v = np.concatenate([hashed(text), np.array(embed_svd(text)) * ADDED])
    n = np.linalg.norm(v)
    if n == 0: v[0] = 1; n = 1
    return (v / n).tolist()
def embed_svd(text):
    v = np.zeros(DIM)
    for x in re.findall(r'[a-z]+', text.lower()):
        if x in STOP or len(x) < 2: continue
        i = lookup(x)
        if i is not None: v += idf[i] * U[i]
    n = np.linalg.norm(v)
    if n == 0: v[0] = 1.0; n = 1.0
    return (v / n).tolist()
if PAIRS:
    for a, b in [('coffee', 'espresso'), ('drink', 'coffee'), ('pet', 'dog'), ('leg', 'knee'), ('pill', 'lisinopril'), ('material', 'latex'), ('run', 'marathon'), ('coffee', 'tax')]:
        print(a, b, float(U[lookup(a)] @ U[lookup(b)]))
    sys.exit(0)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        if n > 64 << 20: self.send_response(413); self.end_headers(); return
        req = json.loads(self.rfile.read(n))
        body = json.dumps({'data': [{'index': i, 'embedding': embed(t)} for i, t in enumerate(req['input'])]}).encode()
        self.send_response(200); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
print('serving', file=sys.stderr, flush=True)
HTTPServer(('127.0.0.1', PORT), H).serve_forever()
