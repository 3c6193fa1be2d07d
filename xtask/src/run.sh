#!/usr/bin/env bash
# Trident's run on a GPU machine, from the bundle that `cargo xtask bundle` builds (no Rust
# needed there). Written by xtask; edit xtask/src/run.sh, not the copy in the bundle.
#
#   [TRIDENT_DATA=<data dir>] [OUT=<dir>] bash run.sh [test|bench|sanitize|all] [BENCH...]
#
# test (default):
# 1. `bin/xtask validate`: the conformance table, with REQUIRE_GPU=1 (a missing CUDA or
#    OpenCL GPU device fails) and REQUIRE_DATA=1 (data/ ships in the bundle);
# 2. every test binary in tests/ (cwd = this bundle), pass/fail recorded.
# bench: every benchmark in benches/ (or only the BENCH names given), the torch/cuSPARSE SpMV
#    baseline on the same matrices, the GAP `tc` baseline on the triangles benchmark's
#    Kronecker graph (when GAPBS_DIR names a gapbs checkout to build), every same-run baseline script baselines/*.py (python3 with
#    torch; each writes {"baselines": [...]} JSON), and `bin/xtask bench-report` over them all.
# sanitize: compute-sanitizer memcheck, then racecheck (SANITIZE_TOOLS picks), over a subset
#    of small CUDA conformance tests (SANITIZE_TESTS overrides) that launches EVERY CUDA
#    kernel (checked: every root of cuda-kernels.txt must appear in the kernel log), one
#    process per test under a time limit (SANITIZE_LIMIT, seconds); the summary fails on any
#    hazard or error, a test that fails or does not finish, or a kernel never launched.
# mutants: every CUDA kernel mutant of mutants.tar.xz (compiled by `cargo xtask bundle`),
#    each run with its tests filter on the conformance binary (TRIDENT_KERNEL_DIR) under a
#    time limit (a hang counts as caught); fails unless every mutant is caught and the
#    unmutated suite passes each filter first. MUTANTS_ONLY=substring narrows the list
#    (several substrings separated by |: a mutant naming any of them).
# compare: same-run before/after benchmarks. COMPARE_WITH names a folder of another build's
#    benchmark executables (e.g. an earlier bundle's benches/, gzipped or not); for every
#    benchmark (or the BENCH names given) the other build runs, then this one, then the other
#    again and this one again (ABAB, so drift shows), each with its own criterion folder,
#    criterion arguments from COMPARE_ARGS (default: 1 s warm-up, 2 s measurement) and the
#    filter COMPARE_FILTER (a criterion regex; default all) and at most COMPARE_LIMIT seconds
#    per run (default none); compare.md gets each benchmark's median before and after and
#    their ratio, rewritten after every run (a run cut short keeps the rows so far).
# all: test, sanitize, then bench.
#
# Results go to ${OUT:-./out} (at most 8 files, so that they all come back from a device run):
# run.log (everything), validate.json, tests.txt, sanitize.txt or mutants.txt, report.md,
# report.svg and results.tar.gz (criterion's data, the baselines' JSON). Exits non-zero if anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODE=${1:-test}
shift || true
ONLY_BENCHES=("$@")
case "$MODE" in
test | bench | sanitize | mutants | compare | all) ;;
*)
    echo "usage: $0 [test|bench|sanitize|mutants|compare|all] [BENCH...]" >&2
    exit 2
    ;;
esac

OUT_DIR=${OUT:-./out}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)

section() { printf '\n==== %s\n' "$*"; }

main() {
    failed=()

    # xtask bundle ships the executables gzipped (a device run carries at most 64 MiB).
    for d in bin tests benches; do
        for f in "$HERE/$d"/*.gz; do
            [ -f "$f" ] && gunzip -f "$f"
        done
    done
    chmod +x "$HERE"/bin/* "$HERE"/tests/* "$HERE"/benches/* 2>/dev/null || true
    export REQUIRE_GPU=1
    export REQUIRE_DATA=1
    # Random cases pinned as in CI (`cargo xtask test`); TRIDENT_SEED overrides.
    export TRIDENT_SEED=${TRIDENT_SEED:-@CI_SEED@}
    RESULTS=$(mktemp -d)

    section "machine"
    uname -a
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"

    # The OpenCL ICD loader: the system's, else the copy shipped in lib/.
    if ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 '; then
        if [ -e "$HERE/lib/libOpenCL.so.1" ]; then
            echo "run.sh: no system libOpenCL.so.1; using the bundled ICD loader"
            export LD_LIBRARY_PATH="$HERE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        else
            echo "run.sh: no libOpenCL.so.1 anywhere: OpenCL will report no platform"
        fi
    fi

    # NVIDIA's OpenCL driver: register it with the ICD loader in a private vendors directory.
    nv_icd=""
    if ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl\.so\.1 '; then
        nv_icd=libnvidia-opencl.so.1
    else
        for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
            if [ -e "$d/libnvidia-opencl.so.1" ]; then
                nv_icd=$d/libnvidia-opencl.so.1
                break
            fi
        done
    fi
    ICD_DIR=""
    if [ -n "$nv_icd" ]; then
        ICD_DIR=$(mktemp -d)
        echo "$nv_icd" >"$ICD_DIR/nvidia.icd"
        export OCL_ICD_VENDORS=$ICD_DIR
        export TRIDENT_OPENCL_PLATFORM=NVIDIA
        echo "run.sh: OpenCL through $nv_icd (OCL_ICD_VENDORS=$ICD_DIR)"
    else
        echo "run.sh: libnvidia-opencl.so.1 not found: no NVIDIA OpenCL platform"
    fi

    # Test data: TRIDENT_DATA, else data/ beside this script.
    if [ -z "${TRIDENT_DATA:-}" ] && [ -d "$HERE/data" ]; then
        export TRIDENT_DATA=$HERE/data
    fi
    echo "run.sh: TRIDENT_DATA=${TRIDENT_DATA:-(unset: tests that need real data may skip or fail)}"

    : >"$OUT_DIR/tests.txt"
    if [ "$MODE" = test ] || [ "$MODE" = all ]; then
    section "validate"
    if (cd "$HERE" && ./bin/xtask validate --json "$OUT_DIR/validate.json"); then
        :
    else
        failed+=("validate")
    fi

    section "tests"
    n_pass=0
    n_fail=0
    for t in "$HERE"/tests/*; do
        [ -f "$t" ] || continue
        name=$(basename "$t")
        section "test $name"
        if (cd "$HERE" && "$t"); then
            echo "pass $name" >>"$OUT_DIR/tests.txt"
            n_pass=$((n_pass + 1))
        else
            echo "FAIL $name" >>"$OUT_DIR/tests.txt"
            n_fail=$((n_fail + 1))
            failed+=("test $name")
        fi
    done
    echo "test binaries: $n_pass passed, $n_fail failed" | tee -a "$OUT_DIR/tests.txt"
    fi

    if [ "$MODE" = sanitize ] || [ "$MODE" = all ]; then
        section "compute-sanitizer"
        : >"$OUT_DIR/sanitize.txt"
        t="$HERE/tests/trident-cuda-conformance"
        # Small cases that together launch every CUDA kernel (f32 and f64 where the kernels
        # differ: the f64 GEMM runs on the tensor cores), each small enough to finish under
        # racecheck within the limit below (svd_special_f32 is too slow for it).
        tests=${SANITIZE_TESTS:-"spmv::spmv_edge_cases_f32 spmv::spmv_garbage_output_every_pass_count_f32 triangles::triangles_empty_and_tiny triangles::triangles_random_vs_brute_force triangles::triangles_shared_graphs_every_algorithm triangles::triangles_every_gpu_kernel_small triangles::triangles_exchanged_small matmul::matmul_base_kernels_f32 matmul::matmul_base_kernels_f64 mcl::mcl_hand_checked_f32 mcl::mcl_planted_partition_f32 mcl::mcl_mlrmcl_hand_checked_f64 mcl::mcl_mlrmcl_planted_f32 mcl::mcl_distributed_pack_round_trip_f32 svd::qr_random_f32 svd::qr_flat_q_small_f32 svd::qr_tree_f32 svd::svd_random_f32 svd::svd_v_orthogonality_f32"}
        limit=${SANITIZE_LIMIT:-150}
        san_failed=0
        if ! command -v compute-sanitizer >/dev/null; then
            echo "FAIL compute-sanitizer: not found" | tee -a "$OUT_DIR/sanitize.txt"
            san_failed=1
        elif [ ! -f "$t" ]; then
            echo "FAIL no tests/trident-cuda-conformance" | tee -a "$OUT_DIR/sanitize.txt"
            san_failed=1
        else
            for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
                klog="$RESULTS/kernels-$tool.txt"
                : >"$klog"
                for name in $tests; do
                    log="$RESULTS/sanitize-$tool-${name//::/-}.log"
                    start=$(date +%s)
                    (cd "$HERE" && TRIDENT_KERNEL_LOG=$klog PROPTEST_CASES=${PROPTEST_CASES:-1} \
                        timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 86 \
                        --print-limit 20 "$t" --exact "$name" --test-threads=1) >"$log" 2>&1
                    rc=$?
                    secs=$(($(date +%s) - start))
                    summary=$(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
                    ran=$(grep -c "^test .* \.\.\. ok$" "$log")
                    if [ "$rc" = 124 ]; then
                        verdict="FAIL (did not finish in ${limit} s)"
                    elif [ "$rc" != 0 ]; then
                        verdict="FAIL (exit $rc)"
                    elif [ "$ran" != 1 ]; then
                        verdict="FAIL (the test did not run)"
                    elif echo "$summary" | grep -qE "SUMMARY: 0 (errors|hazards)"; then
                        verdict="pass"
                    else
                        verdict="FAIL (no clean sanitizer summary)"
                    fi
                    printf '%-9s %-50s %-34s %4ss  %s\n' "$tool" "$name" "$verdict" "$secs" "$summary" |
                        tee -a "$OUT_DIR/sanitize.txt"
                    case "$verdict" in
                    pass) ;;
                    *)
                        san_failed=1
                        grep -hE "=========  (Error|Race|Warning|Invalid|Program hit)|panicked" "$log" |
                            head -10 | tee -a "$OUT_DIR/sanitize.txt"
                        ;;
                    esac
                done
                # Every kernel root must have been launched under this tool.
                missing=()
                while IFS=$'\t' read -r root file; do
                    [ -n "$root" ] || continue
                    grep -qE "^${root}(_f32|_f64)?$" "$klog" || missing+=("$root ($file)")
                done <"$HERE/cuda-kernels.txt"
                if [ ${#missing[@]} -gt 0 ]; then
                    echo "FAIL $tool: kernels never launched: ${missing[*]}" | tee -a "$OUT_DIR/sanitize.txt"
                    san_failed=1
                else
                    echo "$tool: every CUDA kernel root launched ($(wc -l <"$klog") kernels)" |
                        tee -a "$OUT_DIR/sanitize.txt"
                fi
            done
        fi
        if [ "$san_failed" = 0 ]; then
            echo "sanitize: clean and complete" | tee -a "$OUT_DIR/sanitize.txt"
        else
            echo "sanitize: FAILED" | tee -a "$OUT_DIR/sanitize.txt"
            failed+=("sanitize")
        fi
    fi

    if [ "$MODE" = mutants ]; then
        section "CUDA kernel mutants"
        : >"$OUT_DIR/mutants.txt"
        t="$HERE/tests/trident-cuda-conformance"
        MUT=$(mktemp -d)
        if ! python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
            "$HERE/mutants.tar.xz" "$MUT" || [ ! -s "$MUT/mutants/mutants.tsv" ]; then
            echo "FAIL: no CUDA mutants in $HERE/mutants.tar.xz" | tee -a "$OUT_DIR/mutants.txt"
            failed+=("mutants missing")
            mkdir -p "$MUT/mutants" && : >"$MUT/mutants/mutants.tsv"
        fi
        n_run=0
        export TRIDENT_SEED=@MUTANT_SEED@ PROPTEST_MAX_SHRINK_ITERS=0 PROPTEST_DISABLE_FAILURE_PERSISTENCE=1
        declare -A base_secs=()
        n_survived=0
        {
            echo "| mutant | kernel | result | seconds |"
            echo "|---|---|---|---|"
        } >>"$OUT_DIR/mutants.txt"
        while IFS=$'\t' read -r name kernel filter file; do
            [ -n "$name" ] || continue
            if [ -n "${MUTANTS_ONLY:-}" ]; then
                keep=0
                IFS='|' read -ra pats <<<"$MUTANTS_ONLY"
                for pat in "${pats[@]}"; do
                    [[ "$name" == *"$pat"* ]] && keep=1
                done
                [ "$keep" = 1 ] || continue
            fi
            if [ -z "${base_secs[$filter]:-}" ]; then
                start=$(date +%s)
                empty=$(mktemp -d)
                if (cd "$HERE" && TRIDENT_KERNEL_DIR=$empty timeout 600 "$t" "$filter") >"$RESULTS/mutants-base.log" 2>&1 &&
                    grep -q "^test .* \.\.\. ok$" "$RESULTS/mutants-base.log"; then
                    base_secs[$filter]=$(($(date +%s) - start))
                    echo "unmutated suite passes filter '$filter' (${base_secs[$filter]} s)"
                else
                    echo "FAIL: the unmutated suite fails filter '$filter'" | tee -a "$OUT_DIR/mutants.txt"
                    tail -20 "$RESULTS/mutants-base.log"
                    failed+=("mutants baseline $filter")
                    base_secs[$filter]=-1
                fi
            fi
            [ "${base_secs[$filter]}" -ge 0 ] || continue
            limit=$((base_secs[$filter] * 4 + 30))
            start=$(date +%s)
            log="$RESULTS/mutant-$name.log"
            (cd "$HERE" && TRIDENT_KERNEL_DIR="$MUT/mutants/$name" timeout "$limit" "$t" "$filter") >"$log" 2>&1
            rc=$?
            secs=$(($(date +%s) - start))
            caught_by=$(grep -E "^test .* \.\.\. FAILED$" "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | head -3 | paste -sd, -)
            if [ "$rc" = 124 ]; then
                result="caught: HANG (killed after $limit s)"
            elif [ "$rc" = 0 ]; then
                result="**SURVIVED**"
            elif grep -q "loading $MUT/" "$log"; then
                result="**BROKEN** (the mutated kernel image does not load)"
            else
                result="caught by ${caught_by:-the binary failing (exit $rc)}"
            fi
            case "$result" in
            \*\**) n_survived=$((n_survived + 1)) ;;
            esac
            n_run=$((n_run + 1))
            echo "| $name | $kernel | $result | $secs |" | tee -a "$OUT_DIR/mutants.txt"
        done <"$MUT/mutants/mutants.tsv"
        rm -rf "$MUT"
        if [ "$n_survived" -gt 0 ]; then
            echo "mutants: $n_survived of $n_run survived or broken" | tee -a "$OUT_DIR/mutants.txt"
            failed+=("mutants")
        elif [ "$n_run" = 0 ]; then
            echo "mutants: FAIL: no mutant ran" | tee -a "$OUT_DIR/mutants.txt"
            failed+=("mutants: none ran")
        else
            echo "mutants: all $n_run CUDA mutants caught" | tee -a "$OUT_DIR/mutants.txt"
        fi
    fi

    if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
        export CRITERION_HOME=${CRITERION_HOME:-$HERE/criterion}
        DUMP=$(mktemp -d)
        for b in "$HERE"/benches/*; do
            [ -f "$b" ] || continue
            name=$(basename "$b")
            if [ ${#ONLY_BENCHES[@]} -gt 0 ] && [[ ! " ${ONLY_BENCHES[*]} " == *" $name "* ]]; then
                continue
            fi
            section "bench $name"
            if (cd "$HERE" && TRIDENT_SPMV_DUMP=$DUMP TRIDENT_TC_DUMP=$DUMP "$b" --bench); then
                :
            else
                failed+=("bench $name")
            fi
        done

        torch_args=()
        section "torch (cuSPARSE) baseline"
        if ! ls "$DUMP"/*.meta.json >/dev/null 2>&1; then
            echo "no matrices were dumped: skipping"
        elif python3 -c 'import torch' 2>/dev/null; then
            if PYTHONUNBUFFERED=1 python3 "$HERE/torch_spmv.py" "$DUMP" "$OUT_DIR/torch_spmv.json"; then
                torch_args=(--torch "$OUT_DIR/torch_spmv.json")
            else
                failed+=("torch_spmv.py")
            fi
        else
            echo "python3 has no torch: skipping"
        fi
        section "gapbs tc baseline"
        if [ -z "${GAPBS_DIR:-}" ]; then
            echo "GAPBS_DIR not set (a gapbs checkout to build): skipping"
        else
            for el in "$DUMP"/kronecker-s*.el; do
                [ -f "$el" ] || continue
                THREADS=${GAPBS_THREADS:-$(nproc)} TRIDENT="$HERE/bin/trident" \
                    bash "$HERE/gapbs_tc.sh" "$GAPBS_DIR" "$el" 3 || failed+=("gapbs_tc.sh")
            done
        fi
        rm -rf "$DUMP"

        baseline_args=()
        mkdir -p "$RESULTS/baselines"
        for py in "$HERE"/baselines/*.py; do
            [ -f "$py" ] || continue
            name=$(basename "$py" .py)
            if [ ${#ONLY_BENCHES[@]} -gt 0 ] && [[ ! " ${ONLY_BENCHES[*]} " == *" ${name#torch_} "* ]]; then
                continue
            fi
            section "baseline $name"
            if ! python3 -c 'import torch' 2>/dev/null; then
                echo "python3 has no torch: skipping"
            elif PYTHONUNBUFFERED=1 python3 "$py" "$RESULTS/baselines/$name.json"; then
                baseline_args+=(--baseline "$RESULTS/baselines/$name.json")
            else
                failed+=("baseline $name")
            fi
        done

        section "report"
        if "$HERE/bin/xtask" bench-report "$CRITERION_HOME" ${torch_args[@]+"${torch_args[@]}"} \
            ${baseline_args[@]+"${baseline_args[@]}"}; then
            cp "$CRITERION_HOME/report.md" "$CRITERION_HOME/report.svg" "$OUT_DIR/"
        else
            failed+=("bench-report")
        fi
        mkdir -p "$RESULTS/criterion"
        cp -r "$CRITERION_HOME"/. "$RESULTS/criterion/" 2>/dev/null || true
        [ -f "$OUT_DIR/torch_spmv.json" ] && mv "$OUT_DIR/torch_spmv.json" "$RESULTS/baselines/"
    fi
    if [ "$MODE" = compare ]; then
        if [ -z "${COMPARE_WITH:-}" ] || [ ! -d "$COMPARE_WITH" ]; then
            echo "compare: COMPARE_WITH must name a folder of the other build's benchmarks"
            failed+=("compare")
        else
            for f in "$COMPARE_WITH"/*.gz; do
                [ -f "$f" ] && gunzip -f "$f"
            done
            chmod +x "$COMPARE_WITH"/* 2>/dev/null || true
            read -r -a cargs <<<"${COMPARE_ARGS:---warm-up-time 1 --measurement-time 2}"
            filter=()
            [ -n "${COMPARE_FILTER:-}" ] && filter=("$COMPARE_FILTER")
            limit=()
            [ -n "${COMPARE_LIMIT:-}" ] && limit=(timeout "$COMPARE_LIMIT")
            compare_report() {
                [ -d "$RESULTS/compare" ] || return 0
                python3 - "$RESULTS/compare" >"$OUT_DIR/compare.md" <<'PY'
import json, os, sys
root = sys.argv[1]
med = {}
for run in sorted(os.listdir(root)):
    side, rnd = run.rsplit("-", 1)
    for d, _, files in os.walk(os.path.join(root, run)):
        if "estimates.json" in files and os.path.basename(d) == "new":
            bench = os.path.relpath(os.path.dirname(d), os.path.join(root, run))
            with open(os.path.join(d, "estimates.json")) as f:
                m = json.load(f)["median"]["point_estimate"]
            med.setdefault(bench, {}).setdefault(side, []).append(m)
print("| benchmark | before (ms, rounds) | after (ms, rounds) | after / before (median of the rounds) |")
print("| --- | ---: | ---: | ---: |")
for bench in sorted(med):
    b, a = med[bench].get("before", []), med[bench].get("after", [])
    fmt = lambda xs: " / ".join(f"{x / 1e6:.3f}" for x in xs) or "-"
    mid = lambda xs: (sorted(xs)[(len(xs) - 1) // 2] + sorted(xs)[len(xs) // 2]) / 2
    r = f"{mid(a) / mid(b):.3f}" if a and b else "-"
    print(f"| {bench} | {fmt(b)} | {fmt(a)} | {r} |")
PY
            }
            for b in "$HERE"/benches/*; do
                [ -f "$b" ] || continue
                name=$(basename "$b")
                if [ ${#ONLY_BENCHES[@]} -gt 0 ] && [[ ! " ${ONLY_BENCHES[*]} " == *" $name "* ]]; then
                    continue
                fi
                if [ ! -x "$COMPARE_WITH/$name" ]; then
                    echo "compare: $name missing from $COMPARE_WITH"
                    failed+=("compare $name")
                    continue
                fi
                for round in 1 2; do
                    for side in before after; do
                        exe=$b
                        [ "$side" = before ] && exe=$COMPARE_WITH/$name
                        section "compare $name $side (round $round)"
                        if ! (cd "$HERE" && CRITERION_HOME="$RESULTS/compare/$side-$round" \
                            ${limit[@]+"${limit[@]}"} "$exe" --bench "${cargs[@]}" \
                            ${filter[@]+"${filter[@]}"}); then
                            failed+=("compare $name $side")
                        fi
                        compare_report
                    done
                done
            done
            # Written again after every run, so a time limit still leaves the rows so far.
            compare_report || failed+=("compare report")
            cat "$OUT_DIR/compare.md"
        fi
    fi
    tar -C "$RESULTS" -czf "$OUT_DIR/results.tar.gz" --exclude=report --exclude='*.svg' . ||
        echo "run.sh: could not archive the results"
    rm -rf "$RESULTS"

    [ -n "$ICD_DIR" ] && rm -rf "$ICD_DIR"

    section "summary"
    cat "$OUT_DIR/tests.txt"
    if [ ${#failed[@]} -gt 0 ]; then
        echo "FAILED: ${failed[*]}"
        return 1
    fi
    echo "all passed"
}

main 2>&1 | tee "$OUT_DIR/run.log"
exit "${PIPESTATUS[0]}"
