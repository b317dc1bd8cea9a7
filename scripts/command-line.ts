import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The scripts' command line: parseArgs with `--help`/`-h` added; a malformed line prints the error
 * and the usage and exits 2, `--help` prints the usage and exits 0.
 */
export function readCommandLine<T extends NonNullable<ParseArgsConfig['options']>>(
  usage: string,
  options: T,
  allowPositionals = false,
) {
  try {
    const parsed = parseArgs({
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
    });
    if ((parsed.values as { help?: boolean }).help) {
      console.log(usage);
      process.exit(0);
    }
    return parsed;
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
}

/** Prints the problem and the usage, exits 2. */
export function usageError(problem: string, usage: string): never {
  console.error(`${problem}\n${usage}`);
  process.exit(2);
}
