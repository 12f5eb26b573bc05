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
  histogram: { scale: 'log' | 'linear'; edges: number[]; counts: number[]; above: number };
}
