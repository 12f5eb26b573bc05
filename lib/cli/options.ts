/**
 * Option parsers shared by the CLI's commands.
 */
import { InvalidArgumentError, Option } from 'commander';

import { closest, echo } from '../settings/messages.js';

/** Longest line of commander's own error output. */
const COMMANDER_LINE_LIMIT = 400;

/**
 * Commander's own error lines quote the raw argument (`argument '<val>' is
 * invalid`, `unknown option '<opt>'`): each line is capped and escaped like
 * every other echo of input. For `configureOutput({ outputError })`.
 */
export function capErrorOutput(text: string, write: (text: string) => void): void {
  write(text.split('\n').map((line) => (line.length > COMMANDER_LINE_LIMIT ? echo(line, COMMANDER_LINE_LIMIT) : line)).join('\n'));
}

/** Parses a positive safe integer option, naming the option in the error. */
export function positiveInteger(name: string): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
      throw new InvalidArgumentError(`${name} must be a positive integer, got '${echo(value)}'.`);
    }
    return Number(value);
  };
}

/** Parses an integer option from `min` to `max`, naming the option, the value and the range in the error. */
export function integerInRange(name: string, min: number, max: number): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got '${echo(value)}'.`);
    }
    return Number(value);
  };
}

/** Parses a decimal number option from `min` to `max`, naming the option, the value and the range in the error. */
export function numberInRange(name: string, min: number, max: number, unit: string): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a number of ${unit} from ${min} to ${max}, got '${echo(value)}'.`);
    }
    return n;
  };
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * An option taking one of `values`, with the API's did-you-mean on a miss
 * (`--scenario server` -> 'Server'); commander's own choices() lists only.
 */
export function choiceOption(flags: string, description: string, values: readonly string[]): Option {
  const name = flags.split(/[ ,]/)[0]!;
  return new Option(flags, `${description} (${values.join(', ')})`).argParser((value: string) => {
    if (values.includes(value)) return value;
    const s = closest(value, values);
    const hint = s !== undefined ? ` Did you mean '${s}'?` : '';
    throw new InvalidArgumentError(`${name} '${echo(value)}' is not one of ${values.join(', ')}.${hint}`);
  });
}
