// The bench's command line: `--only NAME[,NAME]` (or the names alone), `--json FILE`
// and `--help`. Pure, so that main.ts can refuse a wrong command before it opens anything.

export interface BenchArgs {
  /** Scenario names asked for; empty: every scenario. */
  names: string[];
  /** Where to write the figures as JSON. */
  json: string | undefined;
  help: boolean;
}

export type ParsedArgs = { ok: true; args: BenchArgs } | { ok: false; error: string };

export function parseBenchArgs(argv: string[], known: readonly string[]): ParsedArgs {
  const names: string[] = [];
  let json: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--help' || flag === '-h') help = true;
    else if (flag === '--only') {
      const list = value();
      if (!list) return { ok: false, error: '--only needs a scenario name or a comma-separated list' };
      names.push(
        ...list
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean),
      );
    } else if (flag === '--json') {
      json = value();
      if (!json) return { ok: false, error: '--json needs a file name' };
    } else if (arg.startsWith('-')) return { ok: false, error: `unknown option ${arg}` };
    else names.push(arg);
  }
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    return {
      ok: false,
      error: `unknown scenario${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Known scenarios: ${known.join(', ')}.`,
    };
  return { ok: true, args: { names: [...new Set(names)], json, help } };
}
