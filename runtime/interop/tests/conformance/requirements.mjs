// Prints one requirement set of the installed conformance suite as JSON, for
// conformance_suite.rs, which scores the result folders itself but has no YAML parser:
//   node requirements.mjs <install dir> <revision>
//   -> {"revision", "server": [scored scenario, ...], "notScored": [{"scenario", "reason"}, ...],
//       "client": [scored client scenario, ...], "notScoredClient": [{"scenario", "reason"}, ...]}
// Read with the suite's own `yaml` dependency, so the file is parsed as the suite parses it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [dir, revision] = process.argv.slice(2);
if (!dir || !revision) {
  console.error('usage: node requirements.mjs <install dir> <revision>');
  process.exit(2);
}
const suite = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance');
const YAML = createRequire(join(suite, 'package.json'))('yaml');
const set = YAML.parse(readFileSync(join(suite, 'requirements', `${revision}.yaml`), 'utf8'));
const notScored = (set.not_scored ?? [])
  .filter((entry) => entry.leg === 'server')
  .map(({ scenario, reason }) => ({ scenario, reason }));
const notScoredClient = (set.not_scored ?? [])
  .filter((entry) => entry.leg === 'client')
  .map(({ scenario, reason }) => ({ scenario, reason }));
console.log(
  JSON.stringify({ revision, server: set.server ?? [], notScored, client: set.client ?? [], notScoredClient })
);
