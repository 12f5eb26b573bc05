/**
 * Top-1 of a classification accuracy log, as MLCommons'
 * tools/accuracy-imagenet.py computes it: entries de-duplicated by
 * qsl_idx, each entry's data read as float32 (or int32/int64), the class
 * its only value or (for a log of logits) the index of the largest,
 * compared with the label of line qsl_idx of the label file
 * ('name label' per line, as ImageNet's val_map.txt). The figure is
 * printed as accuracy-imagenet.py prints it ('accuracy={:.3f}%'), which is
 * what the submission checker reads.
 */
import { readFileSync } from 'node:fs';

import type { AccuracyDtype } from '../datasets/accuracy-ids.js';
import { DatasetError } from '../errors.js';
import type { AccuracyLog } from './log.js';
import { predictedClass } from './metrics.js';
import { pythonRound } from './numeric.js';

/** Labels of a val_map.txt-style file, by line (the QSL index). */
export function readLabels(file: string): number[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new DatasetError(file, 0, '', `--labels ${file}: cannot be read (${(error as Error).message})`);
  }
  const labels: number[] = [];
  text.split('\n').forEach((line, i) => {
    const columns = line.trim().split(/\s+/).filter((c) => c.length > 0);
    if (columns.length === 0 && i === text.split('\n').length - 1) return;
    const label = columns.length >= 2 ? Number(columns[1]) : Number.NaN;
    if (columns.length < 2 || !Number.isSafeInteger(label)) {
      throw new DatasetError(file, i + 1, 'label', `${file}:${i + 1}: expected 'name label' with an integer label, found ${JSON.stringify(line.slice(0, 80))}`);
    }
    labels.push(label);
  });
  if (labels.length === 0) throw new DatasetError(file, 0, '', `${file}: no labels ('name label' per line, as ImageNet's val_map.txt)`);
  return labels;
}

function values(bytes: Uint8Array, dtype: AccuracyDtype | 'float32'): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = dtype === 'int64' ? 8 : 4;
  const out: number[] = [];
  for (let i = 0; i + width <= bytes.length; i += width) {
    out.push(dtype === 'float32' ? view.getFloat32(i, true) : dtype === 'int32' ? view.getInt32(i, true) : Number(view.getBigInt64(i, true)));
  }
  return out;
}

/** accuracy (printed, 3 places), good and total of a classification log. */
export function scoreClassification(log: AccuracyLog, labelFile: string, dtype: AccuracyDtype | 'float32', labelOffset: number): { metrics: Record<string, number>; labels: number } {
  const labels = readLabels(labelFile);
  const width = dtype === 'int64' ? 8 : 4;
  let good = 0;
  for (const entry of log.unique) {
    const label = labels[entry.qslIdx];
    if (label === undefined) throw new DatasetError(log.file, entry.index + 1, 'qsl_idx', `${log.file}: entry ${entry.index} field 'qsl_idx': ${entry.qslIdx} is beyond ${labelFile} (${labels.length} labels)`);
    if (entry.bytes.length === 0 || entry.bytes.length % width !== 0) {
      throw new DatasetError(log.file, entry.index + 1, 'data', `${log.file}: entry ${entry.index} field 'data': ${entry.bytes.length} bytes are not a whole number of ${dtype} values (is --accuracy-dtype right?)`);
    }
    const found = predictedClass(values(entry.bytes, dtype)) - labelOffset;
    if (found === label) good++;
  }
  const total = log.unique.length;
  const accuracy = total > 0 ? (100 * good) / total : 0;
  return { metrics: { accuracy: pythonRound(accuracy, 3), good, total }, labels: labels.length };
}
