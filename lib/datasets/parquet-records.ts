/**
 * The records of a Parquet file (hyparquet, with hyparquet-compressors for
 * the codecs pandas and pyarrow write: snappy, gzip, zstd, brotli, lz4),
 * one row group at a time and only the columns a sample needs, so memory
 * is bounded by a row group's decoded columns beyond the samples.
 */
import { stat } from 'node:fs/promises';

import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

import { DatasetError } from '../errors.js';
import { echo } from '../settings/messages.js';
import type { RawRecord } from './json-records.js';

/** The columns of a Parquet file (top-level names). */
function columnNames(metadata: FileMetaData): string[] {
  return parquetSchema(metadata).children.map((c) => c.element.name);
}

/**
 * The rows of `file` as objects of the `wanted` columns it has (a column
 * it lacks is absent from every row), each with its 0-based row number.
 */
export async function* parquetRecords(file: string, wanted: (columns: readonly string[]) => string[]): AsyncGenerator<RawRecord> {
  const where = `dataset ${echo(file)}`;
  let buffer: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    // Parquet is read from its end (the footer), so only a regular file will do.
    if (!(await stat(file)).isFile()) throw new Error('Parquet is read by random access; give a regular file, not a pipe');
    buffer = await asyncBufferFromFile(file);
    metadata = await parquetMetadataAsync(buffer);
  } catch (error) {
    throw new DatasetError(file, 0, '', `${where}: cannot be read as Parquet: ${(error as Error).message}`);
  }
  const columns = wanted(columnNames(metadata));
  if (columns.length === 0) {
    throw new DatasetError(file, 0, '', `${where}: none of its columns (${columnNames(metadata).slice(0, 12).join(', ')}) is a prompt field (tok_input, input, prompt, messages; or --prompt-field NAME)`);
  }
  let row = 0;
  for (const group of metadata.row_groups) {
    const count = Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = (await parquetReadObjects({ file: buffer, metadata, columns, rowStart: row, rowEnd: row + count, compressors })) as Record<string, unknown>[];
    } catch (error) {
      throw new DatasetError(file, row + 1, '', `${where}: rows ${row}..${row + count - 1} cannot be read: ${(error as Error).message}`);
    }
    for (const value of rows) {
      yield { value, place: { line: row + 1, label: `${echo(file)}: row ${row}` } };
      row++;
    }
  }
}
