# Sourced by .ci/new-user, .ci/snippets and .ci/run's harness step: the packages outside the
# repository that depend on it by path, as an app does, built with .ci/debug-build.sh's flags. They share one folder, in which a link
# named `credstore` points at this checkout (a path dependency is named after its folder), and one
# scratch path, so that GRDB and the library are compiled once for the three of them rather than
# once each: with the same dependency path and package name, SwiftPM finds the same commands
# already done.
#   $outside          the folder: credstore -> this checkout, and each package beside it
#   $outside_scratch  the build folder they share (.build-outside)
source .ci/debug-build.sh
outside=${TMPDIR:-/tmp}/credstore-outside-$(printf '%s' "$PWD" | cksum | cut -d' ' -f1)
outside_scratch=$PWD/.build-outside
mkdir -p "$outside"
ln -sfn "$PWD" "$outside/credstore"
# A file added to the path dependency is seen only when the build is planned again (Benchmarks/run
# does the same): planning is cheap, compiling again is what the shared folder saves.
rm -f "$outside_scratch"/*/debug/description.json
