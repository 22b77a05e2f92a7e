#!/bin/sh
# expect_cli.sh RC REGEX CMD...: runs CMD, checks its exit code is RC and that its
# stderr matches the extended regex REGEX ("-": no check). With --json among the
# arguments it also checks that stdout holds exactly one JSON object.
want_rc=$1; regex=$2; shift 2
out=$(mktemp); err=$(mktemp)
"$@" >"$out" 2>"$err"; rc=$?
status=0
if [ "$rc" != "$want_rc" ]; then echo "exit code $rc, want $want_rc"; status=1; fi
if [ "$regex" != "-" ] && ! grep -Eq -e "$regex" "$err"; then echo "stderr does not match /$regex/"; status=1; fi
case " $* " in *" --json "*)
  python3 -c 'import json,sys; t=open(sys.argv[1]).read(); o=json.loads(t); assert isinstance(o,dict); assert t.strip().count("\n")==0' "$out" \
    || { echo "stdout is not exactly one JSON object"; status=1; } ;;
esac
[ $status = 0 ] || { echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; }
rm -f "$out" "$err"
exit $status
