#!/usr/bin/env bash
# The mutation habit: run this on the modules you touched before calling an issue resolved (CI does not: too slow).
#
#   scripts/mutation.sh MODULE [MODULE ...] [--min 90] [--jobs 2] [--budget 30] [--keep] [--verbose] [--stanzas]
#   scripts/mutation.sh --list [MODULE ...]      # the module -> tests mapping it would use; runs nothing
#
# MODULE is a path (src/assay/metrics/budget.py) or a dotted name (assay.metrics.budget). Each module is mutated by
# mutmut 3 (the mutation extra pins it) and only its own tests run, as listed in scripts/mutation_targets.toml; survivors
# that behave exactly like the original are listed, with a reason, in scripts/mutation_equivalent.toml. Per module it
# prints the counts, the score = (killed + timeout) / (mutants - equivalent) and every survivor's diff; it exits 1
# when a module scores below --min (percent), 2 when it could not run. mutmut works in a temporary copy of the
# working tree (uncommitted edits included) that is deleted afterwards: nothing is written to the repository.
# --jobs is mutmut's --max-children (2 by default, for 2-core machines); --budget bounds each module's run (minutes);
# --keep leaves the temporary copy (mutmut browse/show work there); --stanzas prints each survivor's entry for
# scripts/mutation_equivalent.toml, to paste with its reason when the survivor is equivalent.
#
# Python: $PYTHON if set, else the active venv's python3 (pip install -e '.[dev,mutation]' brings mutmut).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "${PYTHON:-python3}" "$here/mutation.py" "$@"
