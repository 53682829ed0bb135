#!/bin/bash
# Runs //tools:inspect: every command, its flags (Abseil's) and usage errors,
# and a snapshot diff before and after --load of a small library of operators.
set -u
INSPECT="$1"
LIB="$(pwd)/$2"
LIB2="$(pwd)/$3"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

# check NAME EXPECTED_STATUS PATTERN -- ARGS...: runs inspect with ARGS and
# checks its exit status and that its output (stdout and stderr) matches
# the grep -E PATTERN.
check() {
  local name="$1" status="$2" pattern="$3"
  shift 4
  local out rc
  out="$("$INSPECT" "$@" 2>&1)"
  rc=$?
  if [[ $rc -ne $status ]]; then
    echo "FAIL $name: exit status $rc, expected $status; output:"
    echo "$out" | head -20
    failures=$((failures + 1))
  elif ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output does not match /$pattern/:"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

check ops_filter 0 '^aten::add\.Tensor$' -- ops add
check ops_all 0 '^aten::relu$' -- ops
check schema 0 '^aten::add\.Tensor\(Tensor self, Tensor other, \*, Scalar alpha=1\) -> Tensor$' -- schema aten::add.Tensor
check dump 0 '^CPU: registered at kernels/' -- dump aten::relu
check table 0 '^AutogradCPU: registered at .* \[autograd kernel\]$' -- table aten::mul.Tensor
check keys 0 '^AutogradCPU +runtime \(per backend\) +fallback: autograd fallback \(warns: no autograd kernel\) registered in turnout framework' -- keys
check keys_alias 0 '^CompositeImplicitAutograd +alias$' -- keys
check registrations 0 '^aten::mm$' -- registrations CPU

# --help (and -h): the usage text, then each flag of tools/inspect.cc with the
# description from its ABSL_FLAG definition; status 0.
check help 0 '^usage: inspect \[--load=LIB\.so\[,LIB\.so\.\.\.\]\] COMMAND \[ARGS\] \[--out=FILE\]$' -- --help
check help_commands 0 '^  snapshot \[--out=FILE\] +the whole registry as JSON' -- --help
check help_load 0 '^  --load +shared libraries of operators to dlopen before the command, in$' -- --help
check help_out 0 '^  --out +for snapshot: the file to write the JSON to, instead of stdout$' -- --help
check help_help 0 '^  --help, -h +this text$' -- --help
check help_short 0 '^  --load +shared libraries' -- -h
check help_wins 0 '^usage: inspect' -- ops --nope --help

# Usage errors and failures: a clear message and a non-zero status. Abseil
# reports a bad flag itself, with status 1.
check no_command 2 'inspect: no command given' --
check unknown_command 2 "inspect: unknown command 'frobnicate'" -- frobnicate
check unknown_flag 1 "^ERROR: Unknown command line flag 'nope'$" -- --nope ops
check unknown_flag_after_command 1 "^ERROR: Unknown command line flag 'nope'$" -- ops --nope
check short_out_gone 2 "inspect: -o is gone .*write \`snapshot --out=FILE\`" -- snapshot -o x.json
check out_not_snapshot 2 'inspect: --out is for snapshot only, not ops' -- --out=x.json ops
check snapshot_operand 2 'snapshot takes no operands' -- snapshot x.json
check schema_arity 2 'schema takes one OP' -- schema
check unknown_op 1 "no operator named 'aten::ad' is registered.*Did you mean" -- schema aten::ad
check bad_key 1 'NotAKey' -- registrations NotAKey
check bad_load 1 'load_library\(/no/such/lib.so\): could not load it: No such file or directory' -- --load /no/such/lib.so ops
check load_no_value 1 "^ERROR: Missing the value for the flag 'load'$" -- ops --load
check load_empty_path 1 'inspect: --load: an empty path in the list' -- --load="$LIB," ops
check diff_missing 1 "cannot read 'missing.json'" -- diff missing.json missing.json

# Loading a library: its operator is there, and a diff says what it did.
check load_ops 0 '^inspect_test::same$' -- --load "$LIB" ops inspect_test
check load_table 0 '^CPU: registered at tests/tools/inspect_test_ops.cc:[0-9]+ \[kernel\]$' -- --load "$LIB" table inspect_test::same
check load_after_command 0 '^inspect_test::same$' -- ops inspect_test --load="$LIB"
# Two libraries: --load repeated (either spelling) or a comma list loads both.
check load_twice_first 0 '^inspect_test::same$' -- --load "$LIB" --load="$LIB2" ops inspect_test
check load_twice_second 0 '^inspect_test_more::other$' -- --load "$LIB" --load="$LIB2" ops inspect_test
check load_list_first 0 '^inspect_test::same$' -- --load="$LIB,$LIB2" ops inspect_test
check load_list_second 0 '^inspect_test_more::other$' -- --load="$LIB,$LIB2" ops inspect_test
check snapshot_before 0 '' -- snapshot --out "$TMP/before.json"
check snapshot_after 0 '' -- --load "$LIB" snapshot --out="$TMP/after.json"
check diff_added_op 0 '^added operator inspect_test::same\(Tensor x\) -> Tensor  registered at tests/tools/inspect_test_ops.cc' -- diff "$TMP/before.json" "$TMP/after.json"
check diff_added_kernel 0 '^added kernel inspect_test::same CPU \[kernel\] registered at tests/tools/inspect_test_ops.cc' -- diff "$TMP/before.json" "$TMP/after.json"
check diff_overridden 0 '^    -> \[kernel\] registered at tests/tools/inspect_test_ops.cc' -- diff "$TMP/before.json" "$TMP/after.json"
check diff_same 0 '^no changes$' -- diff "$TMP/before.json" "$TMP/before.json"
"$INSPECT" snapshot >"$TMP/stdout.json"
check snapshot_stdout_equals_file 0 '^no changes$' -- diff "$TMP/stdout.json" "$TMP/before.json"
echo '{"format": "turnout.registry_snapshot", "version": 1,' >"$TMP/bad.json"
check diff_bad_json 1 'bad.json: line 2, column 1: unexpected end of input' -- diff "$TMP/bad.json" "$TMP/before.json"

# Exactly the three expected changes, nothing else.
n="$("$INSPECT" diff "$TMP/before.json" "$TMP/after.json" | grep -cE '^(added|removed|overridden) ')"
if [[ "$n" != 3 ]]; then
  echo "FAIL diff_count: expected 3 changes, got $n"
  "$INSPECT" diff "$TMP/before.json" "$TMP/after.json"
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
