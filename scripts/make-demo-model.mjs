#!/usr/bin/env node
// Generates models/demo-cnn.onnx, the demo's model, from the seeded weights of
// lib/demo/model.ts (built to dist/: run `npm run build:ts` first). The ONNX
// protobuf is encoded by onnx-proto (a devDependency: the file ships in the
// package, so nothing at run time needs it). Same weights and same message
// contents give the same bytes: running it twice writes identical files.
//
//   node scripts/make-demo-model.mjs [output.onnx]   (default models/demo-cnn.onnx)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let model;
try {
  model = await import(pathToFileURL(resolve(root, 'dist', 'demo', 'model.js')).href);
} catch (cause) {
  console.error(`make-demo-model: cannot load dist/demo/model.js (${cause.message}); run \`npm run build:ts\` first.`);
  process.exit(2);
}
const { onnx } = require('onnx-proto');

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT = onnx.AttributeProto.AttributeType.INT;
const INTS = onnx.AttributeProto.AttributeType.INTS;

const ints = (name, values) => ({ name, type: INTS, ints: values });
const int = (name, value) => ({ name, type: INT, i: value });

/** A float tensor initializer; raw_data is little-endian float32 as ONNX requires. */
function initializer(name, dims, values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return { name, dims, dataType: FLOAT, rawData: bytes };
}

/** A float tensor graph input/output; string dims are symbolic (the batch). */
function tensorValue(name, dims) {
  return {
    name,
    type: {
      tensorType: {
        elemType: FLOAT,
        shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
      },
    },
  };
}

function buildModel() {
  const weights = model.demoWeights();
  const pads = (model.KERNEL - 1) / 2;
  const conv = (name, input, weight, bias, output) => ({
    name,
    opType: 'Conv',
    input: [input, weight, bias],
    output: [output],
    attribute: [
      ints('kernel_shape', [model.KERNEL, model.KERNEL]),
      ints('pads', [pads, pads, pads, pads]),
      ints('strides', [1, 1]),
    ],
  });
  const nodes = [
    conv('conv1', model.INPUT_NAME, 'conv1.weight', 'conv1.bias', 'conv1_out'),
    { name: 'relu1', opType: 'Relu', input: ['conv1_out'], output: ['relu1_out'] },
    {
      name: 'pool1',
      opType: 'MaxPool',
      input: ['relu1_out'],
      output: ['pool1_out'],
      attribute: [ints('kernel_shape', [2, 2]), ints('strides', [2, 2])],
    },
    conv('conv2', 'pool1_out', 'conv2.weight', 'conv2.bias', 'conv2_out'),
    { name: 'relu2', opType: 'Relu', input: ['conv2_out'], output: ['relu2_out'] },
    { name: 'gap', opType: 'GlobalAveragePool', input: ['relu2_out'], output: ['gap_out'] },
    { name: 'flatten', opType: 'Flatten', input: ['gap_out'], output: ['features'], attribute: [int('axis', 1)] },
    {
      name: 'fc',
      opType: 'Gemm',
      input: ['features', 'fc.weight', 'fc.bias'],
      output: [model.OUTPUT_NAME],
      attribute: [int('transB', 1)],
    },
  ];
  return {
    // IR version 8 / opset 13: what onnx-proto's schema (ONNX 1.10) describes;
    // every onnxruntime since 1.10 loads it.
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'loadgen scripts/make-demo-model.mjs',
    producerVersion: '1',
    modelVersion: 1,
    docString: `loadgen demo CNN: seeded weights (seed ${model.DEMO_MODEL_SEED}), see lib/demo/model.ts`,
    graph: {
      name: 'demo_cnn',
      node: nodes,
      initializer: model.WEIGHT_SHAPES.map(({ key, name, dims }) => initializer(name, dims, weights[key])),
      input: [tensorValue(model.INPUT_NAME, ['N', model.INPUT_CHANNELS, model.INPUT_SIZE, model.INPUT_SIZE])],
      output: [tensorValue(model.OUTPUT_NAME, ['N', model.NUM_CLASSES])],
    },
  };
}

const out = resolve(process.cwd(), process.argv[2] ?? resolve(root, 'models', 'demo-cnn.onnx'));
const message = onnx.ModelProto.fromObject(buildModel());
const bytes = onnx.ModelProto.encode(message).finish();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, bytes);
console.log(`make-demo-model: wrote ${out} (${bytes.length} bytes)`);
