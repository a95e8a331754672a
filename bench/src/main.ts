/**
 * `pnpm bench <suite> [--json]`: runs one suite (or all) and prints its metrics, as a table or as the
 * JSON object of DESIGN.md § Benchmark output. Progress goes to stderr, so `--json` stdout is clean.
 */
import { parseArgs } from 'node:util';
import { machineInfo, type Suite, type SuiteResult } from './harness.ts';
import { suites } from './suites/index.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function usage(): string {
  const names = suites.map((s) => `  ${s.name.padEnd(18)} ${s.description}`).join('\n');
  return `usage: pnpm bench [suite] [--json]\n\nsuites:\n${names}\n`;
}

if (values.help) {
  process.stdout.write(usage());
  process.exit(0);
}

const wanted = positionals[0];
const selected: Suite[] = wanted === undefined ? [...suites] : suites.filter((s) => s.name === wanted);
if (selected.length === 0) {
  // One line, exit 1 (a user mistake): `pnpm bench --help` describes the suites.
  process.stderr.write(`unknown suite '${wanted}'; the suites: ${suites.map((s) => s.name).join(', ')}\n`);
  process.exit(1);
}

const results: SuiteResult[] = [];
for (const suite of selected) {
  const machine = machineInfo();
  const log = (line: string) => process.stderr.write(`[${suite.name}] ${line}\n`);
  log('running');
  const metrics = await suite.run({ machine, log });
  results.push({ suite: suite.name, machine, metrics });
}

if (values.json) {
  process.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`);
} else {
  for (const r of results) {
    process.stdout.write(
      `\n${r.suite}  (${r.machine.cpus}, node ${r.machine.node}${r.machine.adapter ? `, ${r.machine.adapter}` : ''})\n`,
    );
    for (const [name, m] of Object.entries(r.metrics)) {
      process.stdout.write(`  ${name.padEnd(32)} ${String(m.value).padStart(14)} ${m.unit}\n`);
    }
  }
}
// Suites may leave worker pools or devices that keep the loop alive; the figures are printed, so exit.
process.exit(0);
