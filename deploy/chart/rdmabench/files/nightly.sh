set -u
run="$RESULTS_DIR/$RUN_PREFIX-$(date -u +%Y%m%d-%H%M%S)"
set --
if [ -n "${PUSHGATEWAY_URL:-}" ]; then set -- --push "$PUSHGATEWAY_URL"; fi
rdmabench run "$SCENARIO_FILE" -n "$RUN_NAMESPACE" --out "$run" "$@"
ran=$?
case $ran in
0|1) ;;
*) echo "rdmabench run exited $ran: not compared" >&2; exit $ran ;;
esac
rdmabench compare --baseline auto "$RESULTS_DIR" "$run" --junit "$run/compare.xml"
compared=$?
if [ "$compared" -eq 4 ]; then
  echo "no baseline yet (first run of this scenario, or first since its environment changed): nothing to compare, not a failure" >&2
  compared=0
fi
if [ "$ran" -ne 0 ]; then exit "$ran"; fi
exit "$compared"
