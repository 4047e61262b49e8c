# Sourced by every CI script that builds in debug (.ci/run, .ci/check-layers, .ci/docs and the
# packages outside the repository): one set of flags, so that each step finds the same commands
# already done rather than compiling again. CI reads no debugger's data, and without it the debug
# build takes about 15% less CPU (most of it BoringSSL's C files and the links).
debug_build=(-debug-info-format none)
