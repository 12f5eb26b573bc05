/**
 * A distribution as loadgen_report_data.json holds it, which the report page
 * and its sections draw.
 */

/** One distribution in loadgen_report_data.json (ns). */
export interface ReportDistribution {
  count: number;
  min: number;
  max: number;
  mean: number;
  /** CDF: fractions p[i] and the values at them, ns[i]. */
  p: number[];
  ns: number[];
  /** Bins [edges[i], edges[i + 1]); `above`: values past the last edge; `zeros`: values of 0 a log axis leaves out. */
  histogram: { scale: 'log' | 'linear'; edges: number[]; counts: number[]; above: number; zeros?: number };
}
