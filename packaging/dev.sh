#!/usr/bin/env bash
# The developer entry point. On a fresh Debian 12 machine:
#   packaging/dev.sh demo    install what is missing, build, start the console in demo mode
#   packaging/dev.sh test    install what is missing, build, run the whole test suite
#   packaging/dev.sh build   install what is missing and build
#   packaging/dev.sh deps    only install the Debian packages
# Environment: BUILD_DIR (default: build), JOBS (default: number of cores).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$here/build}
jobs=${JOBS:-$(nproc)}

# Build tools, Qt 6.4 (Widgets, Sql + QPSQL, Network, Concurrent, Test, Charts),
# libpq's headers (core parses connection strings with libpq), the PostgreSQL
# 15 server binaries for the embedded clusters, Xvfb for screenshots on
# headless machines.
packages=(
    build-essential cmake git clang-format
    qt6-base-dev qt6-base-dev-tools libqt6sql6-psql qt6-charts-dev libqt6opengl6-dev libgl-dev
    # The SVG image and icon plugins: every icon is SVG (nothing links it).
    libqt6svg6
    libpq-dev
    # libcrypto's HMAC-SHA256 for the webhook signatures.
    libssl-dev
    # Kafka and Redpanda destinations (librdkafka; its mock cluster in the tests).
    librdkafka-dev pkg-config
    postgresql-15 postgresql-client-15
    # localedef's locale sources: a test runs a server in German (tst_errorclass).
    locales
    xvfb xauth
    # A private session bus for the notification test (tst_desktopnotifier).
    dbus-daemon
    # The package test: dpkg-deb, readelf, systemd-analyze, appstreamcli.
    dpkg-dev binutils systemd appstream
    # The benchmark's second HTTP ceiling: an nginx answering 204 (bench/).
    nginx-light
)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: installing packages needs root; run as root or install sudo" >&2
        exit 2
    fi
}

install_deps() {
    local missing=()
    for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -q
    # The postgresql package's own cluster is not used: tests and the demo
    # start private clusters from the server binaries.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# promtool, for the test of the example Prometheus alert rules. Debian ships
# it only inside the prometheus server package, whose installation would
# start a Prometheus server: take the one program out of the package instead.
fetch_promtool() {
    local tools="$build_dir/tools"
    if command -v promtool >/dev/null 2>&1 || [ -x "$tools/promtool" ]; then
        return 0
    fi
    log "fetching promtool (from Debian's prometheus package) into $tools"
    local scratch
    scratch=$(mktemp -d)
    if ! (cd "$scratch" && apt-get download -q prometheus >/dev/null 2>&1); then
        as_root apt-get update -q
        (cd "$scratch" && apt-get download -q prometheus)
    fi
    mkdir -p "$tools"
    dpkg-deb --fsys-tarfile "$scratch"/prometheus_*.deb | tar -x -C "$scratch" ./usr/bin/promtool
    mv "$scratch/usr/bin/promtool" "$tools/promtool"
    rm -rf "$scratch"
}

configure_and_build() {
    log "building in $build_dir"
    cmake -S "$here" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DOUTBOX_WARNINGS_AS_ERRORS=ON >/dev/null
    cmake --build "$build_dir" -j "$jobs"
}

run_tests() {
    log "running the test suite"
    # Each test executable starts its own throwaway PostgreSQL cluster.
    QT_QPA_PLATFORM=offscreen ctest --test-dir "$build_dir" --output-on-failure \
        -j "${TEST_JOBS:-2}" "$@"
}

run_demo() {
    # The console with demo mode built in (outbox-console itself holds no demo).
    local console="$build_dir/src/app/outbox-console-demo"
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
        log "no display found: starting the demo inside Xvfb (screen :99)"
        exec xvfb-run -a -s '-screen 0 1600x1000x24' "$console" --demo "$@"
    fi
    exec "$console" --demo "$@"
}

cmd=${1:-}
shift || true
case "$cmd" in
    deps) install_deps ;;
    build) install_deps; configure_and_build ;;
    test) install_deps; fetch_promtool; configure_and_build; run_tests "$@" ;;
    demo) install_deps; configure_and_build; run_demo "$@" ;;
    *)
        sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        [ -z "$cmd" ] || { echo "unknown command: $cmd" >&2; exit 2; }
        exit 2
        ;;
esac
