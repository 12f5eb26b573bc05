/**
 * The `loadgen` command's exit codes: 0 the run completed and is VALID; 1 it
 * completed INVALID; 2 bad input (settings, options, SUT module, an outdir
 * that cannot be created); 3 the run failed (the SUT or QSL threw, or loadgen
 * itself failed); 130 / 143 a SIGINT / SIGTERM stopped the run (its logs
 * written; a second signal exits at once with the same code).
 */
export const EXIT_VALID = 0;
export const EXIT_INVALID = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_RUN_FAILED = 3;
/** 128 + the signal's number: what a shell reports for a process the signal ended. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;
