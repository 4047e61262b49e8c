#!/usr/bin/env bash
# Installs the peer credential stores that Benchmarks/peers/bench_*.py drive, and what
# Benchmarks/run itself needs to build the C reference (Debian or Ubuntu; root, or sudo).
#
#   bash Benchmarks/peers/setup.sh
#
# Idempotent: packages already present are not asked for again, so a rerun is quick and changes
# nothing. The Python packages go into the interpreter that Benchmarks/run uses (`python3` on
# PATH, or $PYTHON), since the keyring drivers import them in-process.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
PYTHON=${PYTHON:-python3}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

# gcc, libsodium and SQLite: the C reference. git: git-credential-store. libsecret-tools,
# gnome-keyring, dbus: secret-tool against a private keyring daemon on a private session bus.
# pass, gnupg: pass with a throwaway key.
apt_packages=(gcc libc6-dev libsodium-dev libsqlite3-dev git
              libsecret-tools gnome-keyring dbus dbus-bin dbus-session-bus-common
              pass gnupg)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "apt: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "apt: everything already installed"
fi

# keyrings.cryptfile (Argon2id) and keyrings.alt (PBKDF2): the two encrypted-file backends of
# Python's keyring.
if "$PYTHON" -c "import keyring, keyrings.cryptfile.cryptfile, keyrings.alt.file" 2>/dev/null; then
  echo "pip: keyring, keyrings.cryptfile, keyrings.alt already importable by $PYTHON"
else
  echo "pip: installing keyring keyrings.cryptfile keyrings.alt for $PYTHON"
  if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    $SUDO apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  # Debian's own python3 refuses pip installs into it (PEP 668): there, into the user's site.
  "$PYTHON" -m pip install -q keyring keyrings.cryptfile keyrings.alt ||
    "$PYTHON" -m pip install -q --user --break-system-packages keyring keyrings.cryptfile keyrings.alt
fi
echo "setup ok"
