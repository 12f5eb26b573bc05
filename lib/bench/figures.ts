/**
 * How the benchmark's figures are written: numbers, microseconds and the
 * label of a Server row.
 */
import type { ServerRow } from './report-types.js';

export function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function us(n: number | undefined): string {
  return n === undefined ? '-' : fmt(n / 1000, 2);
}

export function serverRowLabel(row: Pick<ServerRow, 'sut' | 'targetQps' | 'pinned' | 'pinRequested' | 'dispatchSpinUs' | 'wakeLeadUs'>): string {
  const pin = row.pinned ? ' pinned' : row.pinRequested ? ' (could not pin)' : '';
  const spin = row.dispatchSpinUs ? ` spin ${fmt(row.dispatchSpinUs)}us` : '';
  const lead = row.wakeLeadUs ? ` lead ${fmt(row.wakeLeadUs)}us` : '';
  return `${row.sut} @ ${fmt(row.targetQps)} QPS${pin}${spin}${lead}`;
}
