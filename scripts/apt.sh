#!/usr/bin/env bash
# attnc_apt_install PKG...: installs the Debian packages among PKG that are missing, and
# nothing else (idempotent: dpkg-query per package; apt-get update only when needed).
# Sourced by scripts/setup.sh and benchmarks/peers/install.sh.
attnc_apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    printf '[apt] all %d packages present\n' "$#"
    return
  fi
  printf '[apt] installing %s\n' "${missing[*]}"
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}
