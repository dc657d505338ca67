#!/usr/bin/env bash
# Installs the mini-agent binary for the composite action (action.yml).
#
# 1. Resolve the action's ref to a release tag: a vX.Y.Z ref is the tag itself;
#    any other ref (a major tag such as v1, a commit SHA, a branch) is looked up
#    with `git ls-remote` on the action's repository, and the highest vX.Y.Z tag
#    on the same commit is used.
# 2. Download that release's asset for the runner's OS/arch and the checksums
#    file, and verify the asset's SHA-256. A mismatch, or an asset missing from
#    the checksums file, is a hard failure: nothing is installed.
# 3. When there is no release to download (a branch or `uses: ./`, an
#    unsupported platform, no network, no release yet), build from the action's
#    own source with the runner's Go, at least the version the action's go.mod
#    names whatever GOTOOLCHAIN the workflow exports (an older Go 1.21+ fetches
#    it; an older one fails saying what to add). Cold, that costs minutes and
#    GBs (see source_build_cost).
#
# Every value arrives through the environment (never interpolated by the
# workflow into this script):
#   MINI_AGENT_ACTION_REF   the action's ref (github.action_ref); empty for `uses: ./`
#   MINI_AGENT_ACTION_REPO  the action's owner/name (github.action_repository)
#   MINI_AGENT_ACTION_PATH  the action's source directory (github.action_path)
#   GITHUB_SERVER_URL       where the action's repository and releases live
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_PATH (set by the runner)
# Outputs (to $GITHUB_OUTPUT): path=<binary>, source=release|source, version=<tag or ref>.
# The binary's directory is appended to $GITHUB_PATH so later steps can run
# `mini-agent` (e.g. `mini-agent publish`).
#
# `install-action.sh asset OS ARCH` prints the release asset name for a runner
# (RUNNER_OS and RUNNER_ARCH values) and exits 1 when there is none; the
# packaging tests use it to check the names against the release workflow.
set -euo pipefail
export LC_ALL=C # byte-wise string comparison of version keys

readonly checksums_name="mini-agent_checksums.txt"
readonly connect_timeout=10 # seconds to open a connection
readonly download_timeout=120 # seconds for one download
readonly lsremote_low_speed_time=30 # seconds below 1 KB/s before ls-remote gives up

log() { printf 'mini-agent install: %s\n' "$*" >&2; }
die() { printf '::error title=mini-agent install::%s\n' "$*" >&2; exit 1; }

# asset_for OS ARCH: the release asset name for a runner, or nothing.
# Keep in step with .github/workflows/release.yml (checked by internal/actiontest).
asset_for() {
  local goos goarch
  case "$1" in
    Linux) goos=linux ;;
    macOS) goos=darwin ;;
    Windows) goos=windows ;;
    *) return 1 ;;
  esac
  case "$2" in
    X64) goarch=amd64 ;;
    ARM64) goarch=arm64 ;;
    *) return 1 ;;
  esac
  case "$goos/$goarch" in
    linux/amd64 | linux/arm64 | darwin/arm64 | windows/amd64) ;;
    *) return 1 ;;
  esac
  printf 'mini-agent_%s_%s.tar.gz\n' "$goos" "$goarch"
}

if [ "${1:-}" = "asset" ]; then
  asset_for "${2:-}" "${3:-}"
  exit
fi

# semver_key TAG: a sortable key for vX.Y.Z (pre-releases sort before the release).
semver_key() {
  local core="${1#v}" pre=""
  case "$core" in *-*) pre="${core#*-}"; core="${core%%-*}" ;; esac
  local major minor patch
  IFS=. read -r major minor patch <<<"$core"
  printf '%010d.%010d.%010d.%s\n' "$major" "$minor" "$patch" "${pre:-~}"
}

is_release_tag() { [[ "$1" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; }

# resolve_tag REF: the release tag for REF, or nothing.
resolve_tag() {
  local ref="$1" url="${GITHUB_SERVER_URL%/}/${MINI_AGENT_ACTION_REPO}" refs sha=""
  if is_release_tag "$ref"; then
    printf '%s\n' "$ref"
    return
  fi
  if ! refs=$(GIT_TERMINAL_PROMPT=0 git -c http.lowSpeedLimit=1000 \
    -c "http.lowSpeedTime=$lsremote_low_speed_time" ls-remote "$url" 2>/dev/null); then
    log "cannot list the refs of $url"
    return
  fi
  if [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    sha="$ref"
  else
    # Prefer the peeled commit of an annotated tag, then the tag, then a branch.
    sha=$(awk -v r="refs/tags/$ref^{}" '$2 == r { print $1 }' <<<"$refs")
    [ -n "$sha" ] || sha=$(awk -v r="refs/tags/$ref" '$2 == r { print $1 }' <<<"$refs")
    [ -n "$sha" ] || sha=$(awk -v r="refs/heads/$ref" '$2 == r { print $1 }' <<<"$refs")
  fi
  [ -n "$sha" ] || return 0
  local best="" best_key="" name key
  # Tags whose commit is sha; an annotated tag's ^{} line names its commit.
  while read -r name; do
    is_release_tag "$name" || continue
    key=$(semver_key "$name")
    if [ -z "$best" ] || [[ "$key" > "$best_key" ]]; then
      best="$name" best_key="$key"
    fi
  done < <(awk -v s="$sha" '
    $2 ~ /^refs\/tags\// {
      name = substr($2, 11); peeled = 0
      if (substr(name, length(name) - 2) == "^{}") { name = substr(name, 1, length(name) - 3); peeled = 1 }
      if (peeled) { commit[name] = $1 } else if (!(name in commit)) { commit[name] = $1 }
    }
    END { for (n in commit) if (commit[n] == s) print n }' <<<"$refs")
  [ -z "$best" ] || printf '%s\n' "$best"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{ print $1 }'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{ print $1 }'
  else
    openssl dgst -sha256 -r "$1" | awk '{ print $1 }'
  fi
}

download() { # URL FILE
  curl -fsSL --retry 2 --connect-timeout "$connect_timeout" --max-time "$download_timeout" -o "$2" "$1"
}

# install_release TAG ASSET DIR: download, verify and unpack; 1 when the
# release or asset cannot be downloaded, exit on a verification failure.
install_release() {
  local tag="$1" asset="$2" dir="$3"
  local base="${GITHUB_SERVER_URL%/}/${MINI_AGENT_ACTION_REPO}/releases/download/$tag"
  local tmp="$dir/download"
  mkdir -p "$tmp"
  if ! download "$base/$checksums_name" "$tmp/$checksums_name"; then
    log "no checksums file at $base/$checksums_name"
    return 1
  fi
  if ! download "$base/$asset" "$tmp/$asset"; then
    log "no asset at $base/$asset"
    return 1
  fi
  local want got
  want=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/$checksums_name")
  [ -n "$want" ] || die "$checksums_name of $tag lists no $asset; refusing to install an unverified binary"
  got=$(sha256_of "$tmp/$asset")
  if [ "$got" != "$want" ]; then
    die "SHA-256 mismatch for $asset of $tag: got $got, the checksums file says $want; refusing to install"
  fi
  tar -xzf "$tmp/$asset" -C "$dir" "$bin_name" || die "cannot unpack $bin_name from $asset"
  chmod +x "$dir/$bin_name"
  rm -rf "$tmp"
  log "installed $asset of $tag (SHA-256 verified)"
}

# version_ge A B: dotted version A >= B (components compared as numbers,
# a missing one is 0, a pre-release suffix such as rc1 is ignored).
version_ge() {
  local IFS=. i x y
  local -a a b
  read -r -a a <<<"$1"
  read -r -a b <<<"$2"
  for i in 0 1 2; do
    x="${a[$i]:-0}" y="${b[$i]:-0}"
    x="${x%%[!0-9]*}" y="${y%%[!0-9]*}"
    x="${x:-0}" y="${y:-0}"
    if [ "$x" -gt "$y" ]; then return 0; fi
    if [ "$x" -lt "$y" ]; then return 1; fi
  done
  return 0
}

# The source build's cost, measured cold on a 2-core runner (issue 23): the
# whole module graph downloaded and compiled.
readonly source_build_cost="about 13 minutes and 2.8 GB of module and build cache, cold"

build_from_source() { # DIR VERSION
  local src="${MINI_AGENT_ACTION_PATH:?MINI_AGENT_ACTION_PATH is not set}"
  local pin="pin a release tag (uses: org/mini-agent@v1, or a full vX.Y.Z) to download the verified binary instead"
  if ! command -v go >/dev/null 2>&1; then
    die "no release binary for ref '${MINI_AGENT_ACTION_REF:-}' on ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}, and Go is not installed to build it: use a release tag (uses: org/mini-agent@v1) or add actions/setup-go before this step"
  fi
  # The action's own toolchain requirement, whatever GOTOOLCHAIN the
  # workflow exports (actions/setup-go v6 exports GOTOOLCHAIN=local, which
  # forbids the go command to fetch the Go that go.mod asks for).
  local need have toolchain=local
  need=$(awk '$1 == "go" && NF >= 2 { print $2; exit }' "$src/go.mod" 2>/dev/null || true)
  have=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true)
  have="${have#go}"
  case "$need" in *.*.*) ;; ?*) need="$need.0" ;; esac # go 1.26 means the toolchain go1.26.0
  if [ -n "$need" ] && [ -n "$have" ] && [[ "$have" =~ ^[0-9] ]] && ! version_ge "$have" "$need"; then
    if ! version_ge "$have" 1.21; then
      die "building mini-agent from source needs Go $need or newer (the action's go.mod); the runner's Go is $have, too old to fetch it: add \`actions/setup-go\` with \`go-version: '$need'\` before this step, or $pin"
    fi
    toolchain="go$need"
    log "the runner's Go $have is older than the action's go.mod ($need): building with GOTOOLCHAIN=$toolchain (the go command downloads it from GOPROXY)"
  fi
  log "building from source in $src with Go ${have:-?} (GOTOOLCHAIN=$toolchain): $source_build_cost; $pin"
  # The workflow's GOFLAGS and go.work are for its own module, not this one.
  (cd "$src" && export GOTOOLCHAIN="$toolchain" GOFLAGS= GOWORK=off &&
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$2" -o "$1/$bin_name" ./cmd/mini-agent) ||
    die "go build of mini-agent failed (GOTOOLCHAIN=$toolchain): if the runner cannot download Go ${need:-?} or the modules (no network, GOPROXY=off), add \`actions/setup-go\` with \`go-version: '${need:-stable}'\` before this step and allow the module proxy, or $pin"
}

ref="${MINI_AGENT_ACTION_REF:-}"
bin_name=mini-agent
[ "${RUNNER_OS:-}" != "Windows" ] || bin_name=mini-agent.exe
tmp_root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
if command -v cygpath >/dev/null 2>&1; then tmp_root=$(cygpath -u "$tmp_root"); fi

asset=$(asset_for "${RUNNER_OS:-}" "${RUNNER_ARCH:-}") || asset=""
tag=""
if [ -n "$asset" ] && [ -n "$ref" ] && [ -n "${MINI_AGENT_ACTION_REPO:-}" ] && [ -n "${GITHUB_SERVER_URL:-}" ]; then
  tag=$(resolve_tag "$ref")
fi

source=""
if [ -n "$tag" ]; then
  dir="$tmp_root/mini-agent/$tag"
  mkdir -p "$dir"
  if install_release "$tag" "$asset" "$dir"; then
    source=release version="$tag"
  else
    log "release $tag is not downloadable; falling back to a source build"
  fi
else
  log "no release for ref '${ref:-<local>}' on ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}; building from source"
fi
if [ -z "$source" ]; then
  version="${ref:-local}-source"
  dir="$tmp_root/mini-agent/source"
  mkdir -p "$dir"
  build_from_source "$dir" "$version"
  source=source
fi

bin="$dir/$bin_name"
"$bin" help >/dev/null || die "the installed binary $bin does not run on this runner"
path_entry="$dir"
if command -v cygpath >/dev/null 2>&1; then path_entry=$(cygpath -w "$dir"); fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "path=$bin"
    echo "source=$source"
    echo "version=$version"
  } >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_PATH:-}" ]; then echo "$path_entry" >>"$GITHUB_PATH"; fi
log "mini-agent $version ($source) at $bin"
