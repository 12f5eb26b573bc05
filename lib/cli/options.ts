/**
 * Option parsers shared by the CLI's commands.
 */
import { InvalidArgumentError } from 'commander';

/** Parses a positive safe integer option, naming the option in the error. */
export function positiveInteger(name: string): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
      throw new InvalidArgumentError(`${name} must be a positive integer, got '${value}'.`);
    }
    return Number(value);
  };
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
