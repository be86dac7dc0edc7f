#!/bin/sh
# promtool's unit tests of the example alert rules (packaging/prometheus).
# Usage: prometheus_rules.sh <rules directory> <tools directory>
# promtool is looked up when the test runs, on PATH and then in the build's
# tools directory (where packaging/dev.sh puts it). Without it the test is
# skipped with exit status 77, which CTest reports as skipped (the test's
# SKIP_RETURN_CODE), not passed and not failed.
rules_dir=$1
tools_dir=$2
if command -v promtool >/dev/null 2>&1; then
    promtool=promtool
elif [ -x "$tools_dir/promtool" ]; then
    promtool=$tools_dir/promtool
else
    echo "promtool not found: neither on PATH nor in $tools_dir (packaging/dev.sh test fetches it there)"
    exit 77
fi
cd "$rules_dir" || exit 1
"$promtool" test rules outbox-alerts.test.yml
status=$?
# 77 from promtool itself must not read as "skipped".
[ "$status" -eq 77 ] && exit 1
exit "$status"
